// The sweep report's published bests: each cell's sittings (store table sittings, one per
// search, that is per workload and seed) read into its candidates by the rule the run report
// uses (report/published_best.hpp), so every figure computed from a search's best (geomean
// speedup, fast_p, IQM, Table 3, paired comparisons, the best kernel per workload and its
// roofline fraction) uses the sitting's speedup.
//
// For a search whose sitting counts: the two re-timed kernels take the sitting's medians,
// bands and baseline (their speedups are against the baseline of the same sitting), and no
// other correct candidate of the search is read faster than the published best: the sitting
// found the evaluations' best no faster than that, and the search's best is the sitting's
// faster. The evaluations' speedup stays in evaluated_speedup. Each cell counts its searches
// published by a sitting and those whose two bands overlap (unsettled).
//
// Applying it twice changes nothing (a cell's sittings are consumed). Errors: none.

#ifndef PALLADIUM_STORE_SWEEP_REPORT_SITTINGS_HPP_
#define PALLADIUM_STORE_SWEEP_REPORT_SITTINGS_HPP_

#include "report/sweep_report.hpp"

namespace palladium {

SweepReportInput with_published_bests(SweepReportInput input);

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEP_REPORT_SITTINGS_HPP_
