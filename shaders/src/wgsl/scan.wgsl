// Scans within a workgroup. Every lane summing the counts of the lanes before it is
// WORKGROUP² additions a workgroup, which a CPU adapter pays in full (lavapipe runs a
// workgroup's lanes as loops; there such a scan is most of the tally and partition dispatches'
// time, docs/gpu.md "What it costs"). Here lane r < SCAN_RUNS scans run r (SCAN_RUN lanes) and
// lane 0 the runs' sums: about 2 × WORKGROUP additions, SCAN_RUN + SCAN_RUNS serial steps.

/// The lanes' counts, scanned in place into each lane's sum over the lanes before it in its run.
var<workgroup> lane_counts: array<u32, WORKGROUP>;
/// Each run's sum, scanned in place into the sum over the runs before it; the total last.
var<workgroup> run_sums: array<u32, SCAN_RUNS + 1u>;

/// Each lane's `count`: the sum over the lanes before `lane` (x) and over all lanes (y). Call it
/// in uniform control flow: it synchronises the workgroup before and after reading.
fn lane_sums(count: u32, lane: u32) -> vec2<u32> {
    lane_counts[lane] = count;
    workgroupBarrier();
    if lane < SCAN_RUNS {
        var sum = 0u;
        for (var i = 0u; i < SCAN_RUN; i++) {
            let at = lane * SCAN_RUN + i;
            let k = lane_counts[at];
            lane_counts[at] = sum;
            sum += k;
        }
        run_sums[lane] = sum;
    }
    workgroupBarrier();
    if lane == 0u {
        var sum = 0u;
        for (var r = 0u; r < SCAN_RUNS; r++) {
            let k = run_sums[r];
            run_sums[r] = sum;
            sum += k;
        }
        run_sums[SCAN_RUNS] = sum;
    }
    workgroupBarrier();
    let sums = vec2<u32>(lane_counts[lane] + run_sums[lane / SCAN_RUN], run_sums[SCAN_RUNS]);
    workgroupBarrier();
    return sums;
}
