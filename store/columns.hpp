// How a table of the run store declares its columns: once, beside its record, as
//
//   template <> struct Table<RunRecord> {
//     static constexpr TableSpec spec{"runs", "ru", "run"};
//     template <typename R, typename F> static void columns(R& r, F&& f) {
//       f(ColumnSpec{"id", ColumnKind::store}, r.id);
//       f(ColumnSpec{"name"}, r.name);
//       ...
//     }
//   };
//
// the shape of the evaluation record's generated visit_fields() (protocol/field_spec.hpp), whose
// fields the evaluations table visits inside its own list. From that one list
// store/column_sql.hpp makes the SELECT list, the INSERT and the row reader and binder, so a
// new column is its record's member and its line in the list, in the table's header, plus its
// line in store/schema.sql.

#ifndef PALLADIUM_STORE_COLUMNS_HPP_
#define PALLADIUM_STORE_COLUMNS_HPP_

#include <string_view>

namespace palladium {

// How a column's value travels between a row and its record's member.
enum class ColumnKind {
  field,       // read from the column and written to it as the member's value
  store,       // read only: SQLite or the store fills it (ids, timestamps, flags)
  blob,        // the member is a text kept once in `blobs`; the column holds its hash
  expression,  // read only: `sql` computes it from the row (alias-qualified)
};

struct ColumnSpec {
  std::string_view name;  // the column ("" for an expression)
  ColumnKind kind = ColumnKind::field;
  std::string_view sql = {};  // ColumnKind::expression: what SELECT reads
  // What a database made before the column existed reads in its place (a read-only open does
  // not migrate); "" reads NULL, which leaves the member's default.
  std::string_view absent = {};
};

struct TableSpec {
  std::string_view name;   // the table
  std::string_view alias;  // its alias in the SELECTs made from its columns
  std::string_view row;    // what one row is called in errors, e.g. "sample 12 has ..."
};

// Specialised by each table header for its record: `spec` and `columns(r, f)`.
template <typename Record>
struct Table;

}  // namespace palladium

#endif  // PALLADIUM_STORE_COLUMNS_HPP_
