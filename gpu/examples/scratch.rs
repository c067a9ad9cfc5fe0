// Scratch (not committed): compile and frame times of the pose paths on the character.
use std::time::Instant;
use throng_fixtures::{BenchShape, ProgramSet};
use throng_gpu::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(10000, |s| s.parse().unwrap());
    let mapping = match args.get(2).map(|s| s.as_str()) { Some("group") => Mapping::Workgroup, _ => Mapping::Thread };
    let specialise = match args.get(3).map(|s| s.as_str()) { Some("never") => Specialise::Never, _ => Specialise::Blocking };
    let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    let (mut package, _) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT).unwrap();
    let sk = &package.skeletons[0];
    let mask = throng_cpu_ref::Mask::subtree("q", 0, sk, sk.find("clavicle_r").unwrap(), 1.0).unwrap();
    package.masks.push(mask);
    let clips: Vec<u32> = (0..package.clips.len() as u32).collect();
    let ctx = GpuContext::new().unwrap();
    let mut caps = Capacities::for_packages(&[&package], n as u32);
    caps.skinned_instances = 0;
    let mut rt = Runtime::with_options(&ctx, caps, RuntimeOptions { mapping: Some(mapping), specialise, outputs: Default::default() }).unwrap();
    let id = rt.add_package(&package).unwrap();
    let mut cpu = throng_cpu_ref::CpuRuntime::new(caps.program_limits(), Default::default(), 1);
    let cid = cpu.add_package(&package);
    for shape in BenchShape::ALL {
        let mut set = ProgramSet::new(&package, &clips, 0, shape, n);
        for f in 0..4 {
            set.advance(&package, f);
            let inst: Vec<Instance> = set.programs.iter().map(|p| Instance { pose: Pose::Program(p), placement: glam::Affine3A::IDENTITY }).collect();
            let t = Instant::now();
            let r = rt.frame(&[Batch { package: id, skeleton: 0, skin: None, instances: &inst }]).unwrap();
            let times = rt.finish().unwrap();
            let wall = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            cpu.frame(&[Batch { package: cid, skeleton: 0, skin: None, instances: &inst }]).unwrap();
            let cpu_ms = t.elapsed().as_secs_f64() * 1e3;
            println!("{:?} frame {f}: wall {wall:.1} ms, pose {:.2} ms ({:.1} ns/j), cpu {cpu_ms:.1} ms, spec {} interp {} B/inst {:.0}", shape, times.pose_ms, times.pose_ms * 1e6 / (n * 47) as f64, r.specialised_dispatches, r.interpreter_dispatches, r.bytes_per_instance());
        }
    }
}
