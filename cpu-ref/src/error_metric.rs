//! Object-space error at virtual vertices (DESIGN.md §7).
