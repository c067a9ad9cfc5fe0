//! The `throng` binary's allocator: the system's, counting (throng-fixtures' `alloc`), so that
//! `throng soak` reports allocations per frame and the hero test checks that a pose allocates
//! nothing.

#[global_allocator]
static GLOBAL: throng_fixtures::alloc::Counting = throng_fixtures::alloc::Counting;

pub use throng_fixtures::alloc::total;
