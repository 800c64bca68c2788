//! placeholder, filled in by issue 2/3 work
