//! GPU-vs-CPU parity on the generated character and on the real assets (DESIGN.md §6), for the
//! interpreter and for the specialised pipelines of both mappings.

mod common;

use throng_gpu::parity::{self, PackageUnderTest, Path};
use throng_gpu::Mapping;

const PATHS: [Path; 3] = [Path::Interpreter, Path::Specialised(Mapping::Thread), Path::Specialised(Mapping::Workgroup)];

#[test]
fn character_parity_within_tolerances_on_every_path() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    for path in PATHS {
        let report = parity::run(&ctx, &[PackageUnderTest { name: "character", package: &package }], 7, 24, path).unwrap();
        println!("{report}");
        assert!(report.pass, "{report}");
        let f = &report.frame;
        match path {
            Path::Interpreter => assert_eq!((f.specialised_dispatches, f.interpreter_dispatches), (0, f.pose_dispatches)),
            Path::Specialised(_) => assert_eq!((f.specialised_dispatches, f.interpreter_dispatches), (f.pose_dispatches, 0)),
        }
    }
}
