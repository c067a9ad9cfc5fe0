//! The scalar pose-program interpreter (owned by the evaluation work; see program.rs).
