// The run store's one error type.

#ifndef PALLADIUM_STORE_STORE_ERROR_HPP_
#define PALLADIUM_STORE_STORE_ERROR_HPP_

#include <stdexcept>
#include <string>

namespace palladium {

// A failed store operation: cannot open or migrate the database, a
// constraint the caller broke (e.g. an evaluation for an unknown candidate),
// or an SQLite I/O error. The message names the database path or the
// offending ids. A write that throws has been rolled back.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace palladium

#endif  // PALLADIUM_STORE_STORE_ERROR_HPP_
