//! Every composed WGSL module parses and validates with naga; needs no GPU.

use naga::valid::{Capabilities, ValidationFlags, Validator};

fn validate(name: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    module
}

fn entry_points(module: &naga::Module) -> Vec<(String, [u32; 3])> {
    module
        .entry_points
        .iter()
        .map(|e| (e.name.clone(), e.workgroup_size))
        .collect()
}

#[test]
fn every_module_validates_with_its_entry_points() {
    let expected: [(&str, &[(&str, u32)]); 4] = [
        (
            "program",
            &[(throng_shaders::MAIN, throng_shaders::WORKGROUP)],
        ),
        (
            "fk",
            &[
                (throng_shaders::FK_FAST, throng_shaders::FK_WORKGROUP),
                (throng_shaders::FK_FALLBACK, throng_shaders::WORKGROUP),
            ],
        ),
        (
            "palette",
            &[(throng_shaders::MAIN, throng_shaders::WORKGROUP)],
        ),
        (
            "skinning",
            &[(throng_shaders::MAIN, throng_shaders::WORKGROUP)],
        ),
    ];
    for ((name, source), (expected_name, entries)) in
        throng_shaders::all_sources().iter().zip(expected)
    {
        assert_eq!(*name, expected_name);
        let module = validate(name, source);
        let found = entry_points(&module);
        let wanted: Vec<(String, [u32; 3])> = entries
            .iter()
            .map(|(e, size)| (e.to_string(), [*size, 1, 1]))
            .collect();
        assert_eq!(found, wanted, "{name}: entry points");
    }
}

#[test]
fn a_broken_module_is_rejected() {
    // The check can fail: an undefined function in a composed module is caught by naga.
    let source =
        throng_shaders::palette_source().replace("affine_mul(component", "affine_mull(component");
    assert!(naga::front::wgsl::parse_str(&source).is_err());
}

#[test]
fn shared_math_lives_in_one_place() {
    for (name, source) in throng_shaders::all_sources() {
        assert_eq!(source.matches("fn slerp_shortest").count(), 1, "{name}");
        assert_eq!(source.matches("fn affine_mul").count(), 1, "{name}");
    }
}

#[test]
fn raster_module_validates_with_its_stages() {
    let module = validate("raster", &throng_shaders::raster_source());
    let stages: Vec<(String, naga::ShaderStage)> = module
        .entry_points
        .iter()
        .map(|e| (e.name.clone(), e.stage))
        .collect();
    let wanted = [
        (throng_shaders::CROWD_VS, naga::ShaderStage::Vertex),
        (throng_shaders::CROWD_FS, naga::ShaderStage::Fragment),
        (throng_shaders::GROUND_VS, naga::ShaderStage::Vertex),
        (throng_shaders::GROUND_FS, naga::ShaderStage::Fragment),
    ];
    let wanted: Vec<(String, naga::ShaderStage)> =
        wanted.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    assert_eq!(stages, wanted);
}
