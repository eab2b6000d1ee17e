// The SQL a table's one column list (store/columns.hpp) makes: its SELECT list, its INSERT,
// and the reader and binder of a row, with each value's column spelling (enums by their
// taxonomy spelling, lists and maps as JSON, bools as 0/1, absent optionals as NULL). Private
// to palladium_store; the evaluation record's own fields (protocol/judge_pipe.json) go
// through the same readers and binders.

#ifndef PALLADIUM_STORE_COLUMN_SQL_HPP_
#define PALLADIUM_STORE_COLUMN_SQL_HPP_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/evaluation.hpp"
#include "protocol/taxonomy.hpp"
#include "store/columns.hpp"
#include "store/database.hpp"

namespace palladium::store {

// Stores `text` once in `blobs` and returns its hash (store/blobs_table.cpp); inside the
// caller's WriteScope.
std::string write_blob(Database& db, const std::string& text);

// "s.id, s.run_id, ..." for FROM <table> <alias>: a column the database lacks reads its
// `absent` value; without `texts`, blob columns read as ''.
template <typename Record>
std::string select_list(const Database& db, bool texts = true) {
  using T = Table<Record>;
  const auto& have = db.columns(T::spec.name);
  const std::string alias(T::spec.alias);
  std::string out;
  Record none;
  T::columns(none, [&](const ColumnSpec& c, const auto&) {
    if (!out.empty()) out += ", ";
    const std::string name(c.name);
    if (c.kind == ColumnKind::expression)
      out += c.sql;
    else if (!have.count(name))
      out += c.absent.empty() ? std::string("NULL") : std::string(c.absent);
    else if (c.kind != ColumnKind::blob)
      out += alias + "." + name;
    else
      out += texts ? "(SELECT text FROM blobs WHERE hash = " + alias + "." + name + ")" : "''";
  });
  return out;
}

// "SELECT <select_list> FROM <table> <alias> ", to be followed by WHERE/ORDER BY.
template <typename Record>
std::string select_from(const Database& db, bool texts = true) {
  const TableSpec& t = Table<Record>::spec;
  return "SELECT " + select_list<Record>(db, texts) + " FROM " + std::string(t.name) + " " +
         std::string(t.alias) + " ";
}

// The columns an INSERT writes (fields and blobs), in list order: parameter ?i is the i-th.
template <typename Record>
std::vector<std::string> written_columns() {
  std::vector<std::string> out;
  Record none;
  Table<Record>::columns(none, [&](const ColumnSpec& c, const auto&) {
    if (c.kind == ColumnKind::field || c.kind == ColumnKind::blob) out.emplace_back(c.name);
  });
  return out;
}

// "INSERT INTO <table> (<written columns>) VALUES (?1, ..., ?n)"; bind with bind_row().
template <typename Record>
std::string insert_sql() {
  std::string names, values;
  int index = 0;
  for (const auto& column : written_columns<Record>()) {
    const char* comma = ++index > 1 ? ", " : "";
    names += comma + column;
    values += comma + ("?" + std::to_string(index));
  }
  return "INSERT INTO " + std::string(Table<Record>::spec.name) + " (" + names + ") VALUES (" +
         values + ")";
}

// Reads the columns of one row into their members, from column `first` on. NULL (a column a
// database lacks, or a nullable one) leaves the member's default; a spelling the taxonomy does
// not know, or malformed JSON, is a corrupt row, named by its row kind and id.
class RowReader {
 public:
  RowReader(const Database& db, const sqlite::Statement& st, std::string_view row, int first)
      : db_(db), st_(st), row_(row), column_(first) {}

  template <typename V>
  void operator()(const ColumnSpec& c, V& value) {
    read(c, &value);
    ++column_;
  }
  int next_column() const { return column_; }

 private:
  [[noreturn]] void corrupt(const ColumnSpec& c, const std::string& what) const;
  bool null() const { return st_.is_null(column_); }

  void read(const ColumnSpec& c, int64_t* out) {
    if (null()) return;
    *out = st_.int64(column_);
    if (c.name == "id") id_ = *out;
  }
  void read(const ColumnSpec&, int* out) {
    if (!null()) *out = static_cast<int>(st_.int64(column_));
  }
  void read(const ColumnSpec&, double* out) {
    if (!null()) *out = st_.real(column_);
  }
  void read(const ColumnSpec&, bool* out) {
    if (!null()) *out = st_.int64(column_) != 0;
  }
  void read(const ColumnSpec&, std::string* out) {
    if (!null()) *out = st_.text(column_);
  }
  void read(const ColumnSpec&, std::optional<int64_t>* out) { *out = st_.opt_int64(column_); }
  void read(const ColumnSpec&, std::optional<double>* out) { *out = st_.opt_double(column_); }
  void read(const ColumnSpec&, std::optional<std::string>* out) { *out = st_.opt_text(column_); }
  void read(const ColumnSpec&, std::optional<bool>* out) {
    if (auto v = st_.opt_int64(column_))
      *out = *v != 0;
    else
      out->reset();
  }
  template <typename V>
  void json(const ColumnSpec& c, V* out) {
    if (null()) return;
    try {
      *out = nlohmann::json::parse(st_.text(column_)).get<V>();
    } catch (const nlohmann::json::exception& ex) {
      corrupt(c, "malformed " + std::string(c.name) + ": " + ex.what());
    }
  }
  void read(const ColumnSpec& c, std::vector<int64_t>* out) { json(c, out); }
  void read(const ColumnSpec& c, std::vector<std::string>* out) { json(c, out); }
  void read(const ColumnSpec& c, std::map<std::string, double>* out) { json(c, out); }
  // An enum the row must have.
  template <typename E, typename Parse>
  void required(const ColumnSpec& c, E* out, Parse parse) {
    const std::string text = st_.text(column_);
    auto v = parse(text);
    if (!v) corrupt(c, "unknown " + std::string(c.name) + " '" + text + "'");
    *out = *v;
  }
  void read(const ColumnSpec& c, Verdict* out) { required(c, out, verdict_from_string); }
  void read(const ColumnSpec& c, SampleRole* out) { required(c, out, sample_role_from_string); }
  void read(const ColumnSpec& c, Phase* out) { required(c, out, phase_from_string); }
  // An enum that may be absent: '' (or NULL) is absent.
  template <typename E, typename Parse>
  void optional(const ColumnSpec& c, std::optional<E>* out, Parse parse) {
    const std::string text = st_.text(column_);
    if (text.empty()) return out->reset();
    *out = parse(text);
    if (!*out) corrupt(c, "unknown " + std::string(c.name) + " '" + text + "'");
  }
  void read(const ColumnSpec& c, std::optional<Stage>* out) {
    optional(c, out, stage_from_string);
  }
  void read(const ColumnSpec& c, std::optional<TimingKind>* out) {
    optional(c, out, timing_kind_from_string);
  }
  void read(const ColumnSpec& c, std::optional<NumericsPath>* out) {
    optional(c, out, numerics_path_from_string);
  }

  const Database& db_;
  const sqlite::Statement& st_;
  std::string_view row_;
  int column_;
  int64_t id_ = 0;
};

inline void RowReader::corrupt(const ColumnSpec&, const std::string& what) const {
  db_.fail(std::string(row_) + " " + std::to_string(id_) + " has " + what);
}

template <typename Record>
Record read_row(const Database& db, const sqlite::Statement& st, int first = 0) {
  Record r;
  RowReader reader(db, st, Table<Record>::spec.row, first);
  Table<Record>::columns(r, reader);
  return r;
}

// Binds the written columns of one record as parameters ?first, ?first+1, ...; a blob column
// stores its text first (store/blobs_table.cpp) and binds the hash.
class RowBinder {
 public:
  RowBinder(Database& db, sqlite::Statement& st, int first) : db_(db), st_(st), index_(first) {}

  template <typename V>
  void operator()(const ColumnSpec& c, const V& value) {
    if (c.kind == ColumnKind::store || c.kind == ColumnKind::expression) return;
    if constexpr (std::is_same_v<V, std::string>) {
      if (c.kind == ColumnKind::blob) {
        st_.bind_text(index_++, write_blob(db_, value));
        return;
      }
    }
    bind(value);
    ++index_;
  }
  int next_index() const { return index_; }

 private:
  void bind(int64_t v) { st_.bind_int64(index_, v); }
  void bind(int v) { st_.bind_int64(index_, v); }
  void bind(double v) { st_.bind_double(index_, v); }
  void bind(bool v) { st_.bind_int64(index_, v ? 1 : 0); }
  void bind(const std::string& v) { st_.bind_text(index_, v); }
  void bind(const std::optional<int64_t>& v) { st_.bind_opt_int64(index_, v); }
  void bind(const std::optional<double>& v) { st_.bind_opt_double(index_, v); }
  void bind(const std::optional<bool>& v) {
    if (v)
      st_.bind_int64(index_, *v ? 1 : 0);
    else
      st_.bind_null(index_);
  }
  void bind(const std::optional<std::string>& v) {
    if (v)
      st_.bind_text(index_, *v);
    else
      st_.bind_null(index_);
  }
  void bind(const std::vector<int64_t>& v) { st_.bind_text(index_, nlohmann::json(v).dump()); }
  void bind(const std::vector<std::string>& v) { st_.bind_text(index_, nlohmann::json(v).dump()); }
  void bind(const std::map<std::string, double>& v) {
    st_.bind_text(index_, nlohmann::json(v).dump());
  }
  void bind(Verdict v) { st_.bind_text(index_, to_string(v)); }
  void bind(SampleRole v) { st_.bind_text(index_, to_string(v)); }
  void bind(Phase v) { st_.bind_text(index_, to_string(v)); }
  template <typename E>
  void bind(const std::optional<E>& v) {
    st_.bind_text(index_, spelling(v));
  }

  Database& db_;
  sqlite::Statement& st_;
  int index_;
};

template <typename Record>
int bind_row(Database& db, sqlite::Statement& st, const Record& r, int first = 1) {
  RowBinder binder(db, st, first);
  Table<Record>::columns(r, binder);
  return binder.next_index();
}

}  // namespace palladium::store

#endif  // PALLADIUM_STORE_COLUMN_SQL_HPP_
