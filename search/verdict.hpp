// The verdict taxonomy: the one outcome every evaluated candidate gets.
//
// The string spelling returned by to_string() is the wire spelling (sidecar
// and agent protocol) and the database spelling (evaluations.verdict); see
// docs/architecture.md. tpu_agent/sidecar/verdicts.py holds the same list.
// Add a verdict there, here and in the architecture page together.

#ifndef PALLADIUM_SEARCH_VERDICT_HPP_
#define PALLADIUM_SEARCH_VERDICT_HPP_

#include <optional>
#include <string_view>
#include <vector>

namespace palladium {

// Roughly in pipeline order: the earliest stage that can produce a verdict
// comes first. `correct` is the only success.
enum class Verdict {
  no_code,             // the response had no extractable code
  syntax_error,        // the module does not parse
  lint_rejected,       // forbidden import or removed Pallas API name
  import_error,        // importing the module raised
  api_misuse,          // wrong use of the Pallas / JAX API at trace time
  lowering_error,      // TPU lowering (Mosaic) rejected the kernel
  compile_error,       // backend compilation failed
  runtime_error,       // running the kernel raised
  timeout,             // no result within the job's timeout
  crash,               // the sidecar died mid-job
  resource_exhausted,  // out of VMEM / HBM / host memory
  shape_mismatch,      // outputs have the wrong shape, dtype or structure
  numerics_mismatch,   // outputs differ from the XLA baseline beyond tolerance
  no_pallas,           // correct outputs but no pallas_call in the program
  correct,             // matches the baseline on every seed
};

// The wire/database spelling, e.g. "numerics_mismatch". Never empty.
std::string_view to_string(Verdict v);

// The inverse of to_string(). Exact, case-sensitive match; nullopt for any
// other text (callers decide whether unknown text is an error).
std::optional<Verdict> verdict_from_string(std::string_view text);

// All 15 verdicts in declaration order. The reference is to a static that
// lives for the whole program.
const std::vector<Verdict>& all_verdicts();

}  // namespace palladium

#endif  // PALLADIUM_SEARCH_VERDICT_HPP_
