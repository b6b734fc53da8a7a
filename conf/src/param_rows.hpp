// The shorthand the parameter tables are written in (params_*.cpp), and the
// compile-time checks that a row's member fits its type.
#pragma once

#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"

#include <array>
#include <cstddef>

namespace cqmgr::conf::rows {

using T = ParamType;
using Q = QmgrParams;
using K = ParamField::Kind;
constexpr auto All = ParamReader::AllDaemons;

// One row under construction: a spec, then the member it fills and its check.
struct Row {
    ParamSpec spec;

    constexpr Row to(int64_t Q::*m) const { return with({.kind = K::Number, .number = m}); }
    constexpr Row to(bool Q::*m) const { return with({.kind = K::Flag, .flag = m}); }
    constexpr Row to(std::string Q::*m) const { return with({.kind = K::Text, .text = m}); }
    // A list of words (split on commas and white space).
    constexpr Row to(std::vector<std::string> Q::*m) const {
        return with({.kind = K::Words, .list = m});
    }
    // A list of tables ("type:name", inline:{...} kept whole).
    constexpr Row tables(std::vector<std::string> Q::*m) const {
        return with({.kind = K::Tables, .list = m});
    }
    constexpr Row checked(ParamCheck c) const {
        Row r = *this;
        r.spec.check = c;
        return r;
    }
    constexpr operator ParamSpec() const { return spec; }

  private:
    constexpr Row with(ParamField f) const {
        Row r = *this;
        r.spec.field = f;
        return r;
    }
};

// A row of Postfix's.
constexpr Row P(std::string_view name, ParamType type, std::string_view def, int64_t min,
                int64_t max, ParamReader reader, bool qmgr_uses, std::string_view note = {},
                bool computed = false) {
    return Row{ParamSpec{name, type, def, min, max, reader, computed, qmgr_uses, note}};
}

// A row of cqmgr's own.
constexpr Row C(std::string_view name, ParamType type, std::string_view def, int64_t min,
                int64_t max, std::string_view note) {
    return Row{ParamSpec{name, type, def, min, max, ParamReader::Cqmgr, false, true, note}};
}

// True when the member a row fills can hold its type's values.
constexpr bool fits(const ParamSpec& p) {
    switch (p.field.kind) {
    case K::None:
        return true;
    case K::Number:
        return p.type != T::String && p.type != T::Bool;
    case K::Flag:
        return p.type == T::Bool;
    case K::Text:
    case K::Words:
    case K::Tables:
        return p.type == T::String;
    }
    return false;
}

template <size_t N> constexpr bool all_fit(const std::array<ParamSpec, N>& table) {
    for (const auto& p : table)
        if (!fits(p)) return false;
    return true;
}

// The row named `name` in `table` (not a constant expression when missing,
// so a misspelt fallback does not compile).
template <size_t N>
constexpr const ParamSpec* row(const std::array<ParamSpec, N>& table, std::string_view name) {
    for (const auto& p : table)
        if (p.name == name) return &p;
    throw "no such parameter";
}

// `<transport><suffix>`, which falls back to `fallback` in `table` (and for
// the local transport to `local`, when given) and fills `field`.
template <size_t N>
constexpr TransportSuffix S(const std::array<ParamSpec, N>& table, std::string_view suffix,
                            std::string_view fallback, TransportField field,
                            std::string_view local = {}) {
    const ParamSpec* g = row(table, fallback);
    return TransportSuffix{
        suffix, fallback, g->type, g->min, g->max, g, local.empty() ? nullptr : row(table, local),
        field};
}

// True when each suffix's member holds its global's type, and the global
// fills a member the override can fall back to.
constexpr bool suffix_fits(const TransportSuffix& s) {
    const ParamSpec& g = *s.global;
    switch (s.type) {
    case T::Int:
    case T::Time:
    case T::Percent:
        return s.field.number && g.field.kind == K::Number;
    case T::String:
        return s.field.text && g.field.kind == K::Text;
    case T::Long:
    case T::Bool:
        return false;
    }
    return false;
}

template <size_t N> constexpr bool all_suffixes_fit(const std::array<TransportSuffix, N>& table) {
    for (const auto& s : table)
        if (!suffix_fits(s) || (s.local && s.local->field.kind != s.global->field.kind))
            return false;
    return true;
}

} // namespace cqmgr::conf::rows
