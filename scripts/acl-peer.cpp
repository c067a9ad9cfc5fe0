// The ACL side of scripts/acl-peer.sh (docs/codec.md, "ACL itself on the six clips"): compresses
// one clip that `cargo run -p throng-cook --example acl_peer -- dump` wrote with the Animation
// Compression Library (Frechette, https://github.com/nfrechette/acl), then decompresses it at
// every sample time and halfway between neighbours for `acl_peer measure` to judge.
//
//   acl-peer IN.bin OUT.out PRECISION_M
//
// IN.bin (little-endian): u32 joints J, u32 samples N, f32 rate (Hz), f32 scene scale of the
// skeleton's root transform, J x i32 parent (-1: root), J rest transforms, N x J sampled local
// transforms, u32 times M, M x f32 times to decompress at (seconds); a transform is 10 f32:
// translation xyz, rotation xyzw, scale xyz.
// OUT.out: u32 compressed bytes, u32 times M, M x J decompressed transforms.
//
// Settings: the highest compression level, ACL's default (variable) formats and its qvvf error
// metric, virtual vertices 3 cm out, PRECISION_M metres in scene space, and each joint's rest
// transform as its default value (sub-tracks at rest store nothing, as ours do).
#include <acl/compression/compress.h>
#include <acl/compression/track_array.h>
#include <acl/compression/transform_error_metrics.h>
#include <acl/core/ansi_allocator.h>
#include <acl/decompression/decompress.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kFloats = 10;

rtm::qvvf transform(const float* x) {
    return rtm::qvv_set(rtm::quat_normalize(rtm::quat_set(x[3], x[4], x[5], x[6])),
                        rtm::vector_set(x[0], x[1], x[2]), rtm::vector_set(x[7], x[8], x[9]));
}

// Writes decompressed transforms into one time's row; default sub-tracks take the rest pose.
struct RowWriter : public acl::track_writer {
    float* row = nullptr;
    const float* rest = nullptr;

    static constexpr acl::default_sub_track_mode get_default_rotation_mode() {
        return acl::default_sub_track_mode::variable;
    }
    static constexpr acl::default_sub_track_mode get_default_translation_mode() {
        return acl::default_sub_track_mode::variable;
    }
    static constexpr acl::default_sub_track_mode get_default_scale_mode() {
        return acl::default_sub_track_mode::variable;
    }
    rtm::quatf RTM_SIMD_CALL get_variable_default_rotation(uint32_t j) const {
        const float* r = rest + j * kFloats;
        return rtm::quat_set(r[3], r[4], r[5], r[6]);
    }
    rtm::vector4f RTM_SIMD_CALL get_variable_default_translation(uint32_t j) const {
        const float* r = rest + j * kFloats;
        return rtm::vector_set(r[0], r[1], r[2], 0.0F);
    }
    rtm::vector4f RTM_SIMD_CALL get_variable_default_scale(uint32_t j) const {
        const float* r = rest + j * kFloats;
        return rtm::vector_set(r[7], r[8], r[9], 0.0F);
    }
    void RTM_SIMD_CALL write_rotation(uint32_t j, rtm::quatf_arg0 q) {
        float* o = row + j * kFloats;
        o[3] = rtm::quat_get_x(q);
        o[4] = rtm::quat_get_y(q);
        o[5] = rtm::quat_get_z(q);
        o[6] = rtm::quat_get_w(q);
    }
    void RTM_SIMD_CALL write_translation(uint32_t j, rtm::vector4f_arg0 t) {
        float* o = row + j * kFloats;
        o[0] = rtm::vector_get_x(t);
        o[1] = rtm::vector_get_y(t);
        o[2] = rtm::vector_get_z(t);
    }
    void RTM_SIMD_CALL write_scale(uint32_t j, rtm::vector4f_arg0 s) {
        float* o = row + j * kFloats;
        o[7] = rtm::vector_get_x(s);
        o[8] = rtm::vector_get_y(s);
        o[9] = rtm::vector_get_z(s);
    }
};

template <typename T>
bool read(FILE* f, T* out, size_t count) {
    return fread(out, sizeof(T), count, f) == count;
}

int fail(const char* what, const char* path) {
    fprintf(stderr, "acl-peer: %s: %s\n", path, what);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: acl-peer IN.bin OUT.out PRECISION_M\n");
        return 2;
    }
    const char* in = argv[1];
    const char* out_path = argv[2];
    const float precision = static_cast<float>(atof(argv[3]));
    FILE* f = fopen(in, "rb");
    if (!f) return fail("cannot open", in);
    uint32_t joints = 0, samples = 0;
    float rate = 0.0F, scale = 0.0F;
    bool ok = read(f, &joints, 1) && read(f, &samples, 1) && read(f, &rate, 1) &&
              read(f, &scale, 1);
    std::vector<int32_t> parents(joints);
    std::vector<float> rest(size_t(joints) * kFloats);
    std::vector<float> data(size_t(samples) * joints * kFloats);
    ok = ok && read(f, parents.data(), parents.size()) && read(f, rest.data(), rest.size()) &&
         read(f, data.data(), data.size());
    uint32_t times = 0;
    ok = ok && read(f, &times, 1) && times <= 4 * samples;
    std::vector<float> at(ok ? times : 0);
    ok = ok && read(f, at.data(), at.size());
    fclose(f);
    if (!ok || joints == 0 || samples == 0 || !(rate > 0.0F) || !(scale > 0.0F))
        return fail("not a clip that acl_peer dump wrote", in);

    acl::ansi_allocator allocator;
    acl::track_array_qvvf tracks(allocator, joints);
    for (uint32_t j = 0; j < joints; j++) {
        acl::track_desc_transformf desc;
        desc.output_index = j;
        desc.parent_index = parents[j] < 0 ? acl::k_invalid_track_index : uint32_t(parents[j]);
        desc.precision = precision / scale;
        desc.shell_distance = 0.03F / scale;
        desc.default_value = transform(&rest[size_t(j) * kFloats]);
        acl::track_qvvf track = acl::track_qvvf::make_reserve(desc, allocator, samples, rate);
        for (uint32_t i = 0; i < samples; i++)
            track[i] = transform(&data[(size_t(i) * joints + j) * kFloats]);
        tracks[j] = std::move(track);
    }
    acl::compression_settings settings = acl::get_default_compression_settings();
    settings.level = acl::compression_level8::highest;
    acl::qvvf_transform_error_metric metric;
    settings.error_metric = &metric;
    acl::output_stats stats;
    acl::compressed_tracks* compressed = nullptr;
    const acl::error_result result =
        acl::compress_track_list(allocator, tracks, settings, compressed, stats);
    if (result.any()) return fail(result.c_str(), in);

    std::vector<float> decoded(size_t(times) * joints * kFloats);
    acl::decompression_context<acl::default_transform_decompression_settings> context;
    context.initialize(*compressed);
    RowWriter writer;
    writer.rest = rest.data();
    for (uint32_t m = 0; m < times; m++) {
        writer.row = &decoded[size_t(m) * joints * kFloats];
        context.seek(at[m], acl::sample_rounding_policy::none);
        context.decompress_tracks(writer);
    }
    const uint32_t bytes = compressed->get_size();
    allocator.deallocate(compressed, bytes);

    FILE* o = fopen(out_path, "wb");
    if (!o) return fail("cannot create", out_path);
    ok = fwrite(&bytes, 4, 1, o) == 1 && fwrite(&times, 4, 1, o) == 1 &&
         fwrite(decoded.data(), sizeof(float), decoded.size(), o) == decoded.size();
    if (fclose(o) != 0 || !ok) return fail("cannot write", out_path);
    return 0;
}
