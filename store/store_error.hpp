// The run store's one error type.

#ifndef PALLADIUM_STORE_STORE_ERROR_HPP_
#define PALLADIUM_STORE_STORE_ERROR_HPP_

#include <stdexcept>
#include <string>

#include "protocol/errc.hpp"

namespace palladium {

// A failed store operation: cannot open the database (or it is not ours, or
// locked), a constraint the caller broke (e.g. an evaluation for an unknown
// candidate), or an SQLite I/O error. The message names the database path
// or the offending ids. A write that throws has been rolled back.
//
// code() says what the caller may do (protocol/errc.hpp): aborted (busy:
// retry), resource_exhausted (disk full), unavailable (I/O error),
// data_loss (corrupt file), invalid_argument (a broken constraint or bad
// value), failed_precondition (not ours, locked, read-only, wrong schema).
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what, Errc code = Errc::failed_precondition)
      : std::runtime_error(what), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_STORE_ERROR_HPP_
