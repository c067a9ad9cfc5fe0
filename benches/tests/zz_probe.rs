use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use glam::Affine3A;
use throng_bench::{Crowd, Shape, Subject};
use throng_gpu::{Batch, Capacities, GpuContext, Instance, Pose, Runtime};
struct Counting;
thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static IN: Cell<bool> = const { Cell::new(false) };
    static TRACES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 { note(); unsafe { System.alloc(layout) } }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) { unsafe { System.dealloc(ptr, layout) } }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 { note(); unsafe { System.realloc(ptr, layout, size) } }
}
fn note() {
    let _ = ON.try_with(|on| {
        if on.get() && !IN.with(|i| i.get()) {
            IN.with(|i| i.set(true));
            let bt = std::backtrace::Backtrace::force_capture().to_string();
            let frames: Vec<&str> = bt.lines().filter(|l| !l.trim_start().starts_with("at ")).collect();
            // first frame outside alloc machinery
            let key: Vec<String> = frames.iter().skip(3).filter(|l| !l.contains("alloc::") && !l.contains("zz_probe") && !l.contains("core::")).take(3).map(|s| s.trim().to_string()).collect();
            TRACES.with(|t| t.borrow_mut().push(key.join(" <- ")));
            IN.with(|i| i.set(false));
        }
    });
}
#[global_allocator]
static A: Counting = Counting;
#[test]
fn probe() {
    let ctx = GpuContext::new().unwrap();
    let subject = Subject::character().unwrap();
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&subject.package], 256)).unwrap();
    let id = runtime.add_package(&subject.package, &subject.masks_per_skeleton()).unwrap();
    let mut crowd = Crowd::new(&subject, Shape::Layered, 4);
    for f in 0..4 {
        crowd.advance(&subject, f);
        let instances: Vec<Instance> = crowd.programs.iter().map(|p| Instance { pose: Pose::Program(p), placement: Affine3A::IDENTITY }).collect();
        let batch = [Batch { package: id, skeleton: subject.skeleton, skin: subject.skin, instances: &instances }];
        if f == 3 { ON.with(|o| o.set(true)); }
        runtime.frame(&batch).unwrap();
        runtime.finish().unwrap();
        ON.with(|o| o.set(false));
    }
    let traces = TRACES.with(|t| t.borrow().clone());
    let mut counts = std::collections::BTreeMap::new();
    for t in &traces { *counts.entry(t.clone()).or_insert(0) += 1; }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by_key(|x| -x.1);
    for (k, n) in v { println!("{n:4} {k}"); }
}
