use crate::{SyntaxKind, SyntaxNode};
pub struct SourceFile(SyntaxNode);
impl SourceFile {
    pub fn cast(n: SyntaxNode) -> Option<Self> {
        (n.kind() == SyntaxKind::SOURCE_FILE).then_some(SourceFile(n))
    }
}
