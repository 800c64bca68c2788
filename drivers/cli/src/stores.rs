//! The stores behind a refuted element: for each kernel, the instruction
//! that wrote the element's final value (`ElementFailure::reference_store`,
//! `candidate_store`, recorded by the engine's store path), named the way
//! a race report names an access — PTX instruction, PTX file and line,
//! CUDA/Python line and its text — through the same [`Resolver`].

use ptxeq_check::schema;
use ptxeq_db::{Database, KernelRaceReport, Slot};
use ptxeq_exec::StoreSite;

use crate::positions::{Position, Resolver};

/// One store, resolved.
pub struct NamedStore {
    pub pos: Position,
    /// `k.cu:11 | y[i] = acc;` when the source file is on disk.
    pub excerpt: Option<String>,
    pub site: StoreSite,
    /// The kernel's PTX file.
    pub ptx: String,
}

impl NamedStore {
    /// `thread 3 of CTA (0,0,0) at instruction 42 (ptx:120, k.cu:11:5)
    /// \`st.global.f32 [%rd4], %f3\``.
    pub fn line(&self) -> String {
        let [x, y, z] = self.site.cta;
        format!("{} of CTA ({x},{y},{z}) at {}", self.site.thread, self.pos)
    }

    /// The `ptxeq.check/1` form.
    pub fn json(&self) -> schema::Store {
        let text = self
            .excerpt
            .as_deref()
            .and_then(|e| e.split_once(" | ").map(|(_, t)| t.to_owned()));
        schema::Store {
            function: self.pos.function.clone(),
            index: self.pos.index,
            instruction: self.pos.text.clone(),
            ptx: self.ptx.clone(),
            ptx_line: self.pos.ptx_line,
            source: self.pos.source.clone(),
            source_file: self.pos.source_file.clone(),
            source_line: self.pos.source_line,
            source_text: text,
            thread: self.site.thread.tid,
            cta: self.site.cta,
        }
    }
}

/// Resolves the stores of a check's kernels.
pub struct Stores<'a> {
    kernels: Vec<(Slot, Resolver<'a>, String)>,
}

impl<'a> Stores<'a> {
    pub fn new(db: &'a Database, kernels: &'a [KernelRaceReport]) -> Self {
        Stores {
            kernels: kernels
                .iter()
                .map(|k| {
                    (
                        k.slot,
                        Resolver::new(db, k.file, k.input.as_deref()),
                        k.file.path(db).to_string_lossy().into_owned(),
                    )
                })
                .collect(),
        }
    }

    /// The store `site` of the kernel in `slot`, resolved.
    pub fn name(&self, slot: Slot, site: Option<StoreSite>) -> Option<NamedStore> {
        let site = site?;
        let (_, res, ptx) = self.kernels.iter().find(|(s, _, _)| *s == slot)?;
        let pos = res.resolve(site.instr);
        Some(NamedStore {
            excerpt: res.source_excerpt(&pos),
            pos,
            site,
            ptx: ptx.clone(),
        })
    }
}
