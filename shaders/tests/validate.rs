//! Every kernel the runtime can build parses and validates with naga, and the host structs
//! match naga's layout of their WGSL twins; needs no GPU.

use naga::valid::{Capabilities, ValidationFlags, Validator};
use throng_cpu_ref::clip::encoding::{COMPRESSED, REFERENCE};
use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::{PoseOp, Program};
use throng_shaders::kernel::{self, group_size};
use throng_shaders::{FrameLayout, Kernel, Outputs, Paging, Resource, Shape, Stream};

fn validate(name: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

/// Every declared `@binding` of group 0 is listed once, in order, and nothing else is.
fn check_bindings(k: &Kernel, module: &naga::Module) {
    let mut declared: Vec<u32> = module
        .global_variables
        .iter()
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| b.binding))
        .collect();
    declared.sort_unstable();
    let listed: Vec<u32> = k.bindings.iter().map(|b| b.binding).collect();
    assert_eq!(declared, listed, "{}", k.label);
    assert_eq!(module.entry_points.len(), 1, "{}", k.label);
    assert_eq!(
        module.entry_points[0].workgroup_size,
        [k.workgroup, 1, 1],
        "{}",
        k.label
    );
}

fn layout(pages: u32) -> FrameLayout {
    let p = |stride| Paging {
        pages,
        page_instances: 100,
        stride,
    };
    FrameLayout {
        locals: p(8),
        components: p(8),
        palettes: p(8),
        skinned: p(30),
        last_palettes: p(8),
        previous: p(30),
        curves: p(4),
        history: p(8),
    }
}

const OUTPUTS: [Outputs; 4] = [
    Outputs {
        locals: false,
        components: true,
        palettes: false,
        curves: false,
    },
    Outputs {
        locals: false,
        components: true,
        palettes: true,
        curves: true,
    },
    Outputs {
        locals: true,
        components: true,
        palettes: true,
        curves: false,
    },
    Outputs {
        locals: true,
        components: false,
        palettes: false,
        curves: true,
    },
];

/// One clip; a 2-way blend; the layered shape of the benchmark (blend, masked override,
/// additive against rest), with the second sample compressed.
fn programs() -> Vec<Program> {
    vec![
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.1),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![],
        },
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.1),
                PoseOp::sample(1, 1, 0.2),
                PoseOp::blend(2, 0, 2, 0),
                PoseOp::to_component(2),
            ],
            weights: vec![0.5, 0.5],
        },
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.1),
                PoseOp::sample(1, 1, 0.2),
                PoseOp::blend(2, 0, 2, 0),
                PoseOp::sample(3, 0, 0.3),
                PoseOp::overriding(2, 3, 0.8, 1).with_curves(1),
                PoseOp::sample(4, 1, 0.0),
                PoseOp::rest(5),
                PoseOp::additive(2, 4, 5, 0.5, NO_MASK),
                PoseOp::to_component(2),
            ],
            weights: vec![0.25, 0.75],
        },
        // Inertialized destination: reads history.
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.1),
                PoseOp::inertialize(0, 3, 0.1, 0.3),
                PoseOp::to_component(0),
            ],
            weights: vec![],
        },
        // An interrupted inertialization: the old offset on both source samples, a capture, and
        // the new offset from the capture itself.
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.1),
                PoseOp::sample(1, 1, 0.2),
                PoseOp::inertialize(1, 3, 0.1, 0.3),
                PoseOp::sample(2, 1, 0.18),
                PoseOp::inertialize(2, 3, 0.08, 0.3),
                PoseOp::sample(3, 0, 0.08),
                PoseOp::capture(0, 1, 2, 3, 3, 0.02),
                PoseOp::inertialize(0, 3, 0.0, 0.3),
                PoseOp::to_component(0),
            ],
            weights: vec![],
        },
    ]
}

#[test]
fn every_pose_kernel_validates_with_the_bindings_it_lists() {
    for pages in [1, 3] {
        for outputs in OUTPUTS {
            let k = kernel::interpreter(&layout(pages), outputs);
            check_bindings(&k, &validate(&k.label, &k.source));
            for program in programs() {
                for encoding in [REFERENCE, COMPRESSED] {
                    let shape = Shape::of(&program, |c| if c == 1 { encoding } else { REFERENCE });
                    for decoded in [false, true] {
                        let k = kernel::thread(&layout(pages), outputs, &shape, decoded);
                        check_bindings(&k, &validate(&k.label, &k.source));
                        if outputs.components {
                            let size = group_size(5).unwrap();
                            let k = kernel::group(&layout(pages), outputs, &shape, size, decoded);
                            check_bindings(&k, &validate(&k.label, &k.source));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn skinning_bounds_budget_decode_present_and_raster_validate() {
    for pages in [1, 4] {
        for k in [
            kernel::bounds(&layout(pages), false),
            kernel::bounds(&layout(pages), true),
            kernel::decode(),
            kernel::budget(),
            kernel::scatter(),
            kernel::tally(),
            kernel::partition(&layout(pages), false),
            kernel::partition(&layout(pages), true),
            kernel::present(),
            kernel::patch(),
            kernel::attachments(&layout(pages)),
        ] {
            check_bindings(&k, &validate(&k.label, &k.source));
        }
        for (motion, morph) in [(false, false), (true, false), (false, true), (true, true)] {
            let k = kernel::skinning(&layout(pages), motion, morph);
            let module = validate(&k.label, &k.source);
            check_bindings(&k, &module);
            let bound = |stream| {
                (k.bindings.iter())
                    .filter(|b| matches!(b.resource, Resource::Page(s, _) if s == stream))
                    .count()
            };
            assert_eq!(bound(Stream::Skinned), pages as usize);
            let motion_pages = if motion { pages as usize } else { 0 };
            assert_eq!(bound(Stream::Previous), motion_pages);
            assert_eq!(bound(Stream::LastPalettes), motion_pages);
            assert_eq!(
                bound(Stream::Curves),
                if morph { pages as usize } else { 0 }
            );
        }
    }
    let module = validate("raster", &throng_shaders::raster_source());
    let stages: Vec<&str> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        stages,
        [
            throng_shaders::CROWD_VS,
            throng_shaders::CROWD_FADING_VS,
            throng_shaders::CROWD_COARSER_VS,
            throng_shaders::PROP_VS,
            throng_shaders::CROWD_FS,
            throng_shaders::CROWD_FADING_FS,
            throng_shaders::CROWD_COARSER_FS,
            throng_shaders::CARD_VS,
            throng_shaders::CARD_FS,
            throng_shaders::CARD_MOTION_VS,
            throng_shaders::CARD_MOTION_FS,
            throng_shaders::GROUND_VS,
            throng_shaders::GROUND_FS,
            throng_shaders::MOTION_VS,
            throng_shaders::MOTION_FS
        ]
    );
}

#[test]
fn a_broken_kernel_is_rejected() {
    // The check can fail: an undefined function in a composed module is caught by naga.
    let source = kernel::skinning(&layout(1), false, false)
        .source
        .replace("affine_point(blend,", "affine_pointt(blend,");
    assert!(naga::front::wgsl::parse_str(&source).is_err());
}

#[test]
fn specialised_kernels_run_their_shape_without_an_op_switch() {
    let shape = Shape::of(&programs()[2], |_| REFERENCE);
    let interpreter = kernel::interpreter(&layout(1), OUTPUTS[1]);
    assert!(interpreter.source.contains("switch o.x"));
    for k in [
        kernel::thread(&layout(1), OUTPUTS[1], &shape, false),
        kernel::group(&layout(1), OUTPUTS[1], &shape, (32, 2), false),
    ] {
        assert!(
            !k.source.contains("switch o.x") && !k.source.contains("shapes["),
            "{}",
            k.label
        );
        // The layered shape: a blend of two samples, an override through a mask whose id each
        // instance's record holds (so skeletons with masks of their own share it), an additive.
        assert!(
            k.source.contains("fn blend_")
                && k.source.contains("override_joint(")
                && k.source.contains("additive_joint(")
        );
        assert!(
            k.source.contains("mask_weight(h.k") && !k.source.contains("mask_weight(1u, j)"),
            "{}",
            k.label
        );
        assert!(
            !k.source.contains("sample_compressed(h."),
            "reference clips only: {}",
            k.label
        );
    }
}

#[test]
fn dead_ops_are_not_compiled() {
    let program = Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.1),
            PoseOp::sample(1, 1, 0.5),
            PoseOp::to_component(0),
        ],
        weights: vec![],
    };
    let k = kernel::group(
        &layout(1),
        OUTPUTS[0],
        &Shape::of(&program, |_| REFERENCE),
        (32, 2),
        false,
    );
    assert_eq!(
        k.source.matches("sample_reference(h.").count(),
        1,
        "only the sample ToComponent reads"
    );
}

#[test]
fn host_structs_match_naga_layout() {
    let k = kernel::interpreter(&layout(1), OUTPUTS[0]);
    let modules = [
        k.source,
        kernel::skinning(&layout(1), false, false).source,
        kernel::bounds(&layout(1), true).source,
        kernel::budget().source,
        kernel::partition(&layout(1), true).source,
        kernel::scatter().source,
        kernel::tally().source,
        kernel::attachments(&layout(1)).source,
        kernel::decode().source,
        kernel::present().source,
        kernel::patch().source,
    ]
    .map(|s| naga::front::wgsl::parse_str(&s).unwrap());
    let sizes = [
        ("PoseParams", size_of::<throng_shaders::PoseParams>()),
        ("KindRow", size_of::<throng_shaders::KindRow>()),
        ("UnitRow", size_of::<throng_shaders::UnitRow>()),
        ("SkinParams", size_of::<throng_shaders::SkinParams>()),
        ("BoundsParams", size_of::<throng_shaders::BoundsParams>()),
        ("BudgetParams", size_of::<throng_shaders::BudgetParams>()),
        (
            "PartitionParams",
            size_of::<throng_shaders::PartitionParams>(),
        ),
        ("ScatterParams", size_of::<throng_shaders::ScatterParams>()),
        ("TallyParams", size_of::<throng_shaders::TallyParams>()),
        ("AttachParams", size_of::<throng_shaders::AttachParams>()),
        ("DecodeParams", size_of::<throng_shaders::DecodeParams>()),
        ("PresentParams", size_of::<throng_shaders::PresentParams>()),
        ("BinRow", size_of::<throng_shaders::BinRow>()),
        ("PatchParams", size_of::<throng_shaders::PatchParams>()),
    ];
    for (name, host) in throng_shaders::layout::host_offsets() {
        let ty = (modules.iter())
            .flat_map(|m| m.types.iter())
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no kernel declares {name}"))
            .1;
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("{name} is not a struct")
        };
        let wgsl: Vec<(&str, usize)> = members
            .iter()
            .filter_map(|m| {
                m.name
                    .as_deref()
                    .filter(|n| !n.starts_with("pad"))
                    .map(|n| (n, m.offset as usize))
            })
            .collect();
        assert_eq!(wgsl, host, "{name}");
        assert_eq!(
            *span as usize,
            sizes.iter().find(|s| s.0 == name).unwrap().1,
            "{name} size"
        );
    }
}

#[test]
fn prelude_constants_come_from_the_rust_definitions() {
    let p = throng_shaders::prelude::source();
    assert!(p.contains(&format!(
        "const ENCODING_COMPRESSED: u32 = {}u;",
        COMPRESSED
    )));
    assert!(p.contains(&format!(
        "const OP_ADDITIVE: u32 = {}u;",
        throng_cpu_ref::program::op::ADDITIVE
    )));
    assert!(p.contains(&format!("const NO_MASK: u32 = {}u;", NO_MASK)));
    // The sources use the names, not the numbers.
    let k = kernel::interpreter(&layout(1), OUTPUTS[0]);
    let body = &k.source[p.len()..];
    assert!(!body.contains("const ENCODING_") && !body.contains("const OP_"));
}
