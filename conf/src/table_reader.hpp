// Reads rows of the parameter table into a QmgrParams: each value with its
// row's type, default, bounds and check, in table order (so the first error
// is the one stock reports first), then into the member the row names.
#pragma once

#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

#include <span>
#include <string>
#include <string_view>

namespace cqmgr::conf {

class TableReader {
  public:
    TableReader(const MainCf& cf, QmgrParams& out) : cf_(cf), out_(out) {}

    // Reads the rows of `table` from `first` to `last` into out.values.
    void read(std::span<const ParamSpec> table, std::string_view first, std::string_view last);
    // Reads all of `table`.
    void read(std::span<const ParamSpec> table) {
        read(table, table.front().name, table.back().name);
    }
    // Copies each value read into the member its row names.
    void fill(std::span<const ParamSpec> table);

    // Typed access to values already read.
    const std::string& s(std::string_view n) const { return std::get<std::string>(get(n)); }
    int64_t i(std::string_view n) const { return std::get<int64_t>(get(n)); }
    bool b(std::string_view n) const { return std::get<bool>(get(n)); }

    // Stops with a message in Postfix's "file DIR/main.cf: parameter ..." form.
    // `warning` is what Postfix complains of just before (may be empty).
    [[noreturn]] void fatal_main_cf(const std::string& name, const std::string& text,
                                    const std::string& warning = {}) const;

  private:
    // A value already read (a missing one is a bug in the reading order).
    const QmgrParams::Value& get(std::string_view n) const;

    const MainCf& cf_;
    QmgrParams& out_;
};

} // namespace cqmgr::conf
