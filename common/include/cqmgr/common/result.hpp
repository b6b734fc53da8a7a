// A value or the typed error that kept it from being made, in the manner of
// C++23's std::expected: every layer reports its failures as one of these
// (or as a typed error alone), so that a caller branches on the error's
// type and kind, never on its text, and the text is rendered once, by the
// error's message(), where it is logged.
//
//   Result<Reply, ReplyError> decode(...);
//   if (auto r = decode(...)) use(*r); else log(r.error().message());
//   return Failure{ReplyError{...}};          // inside decode()
#pragma once

#include <utility>
#include <variant>

namespace cqmgr {

// The error a Result is made from: `return Failure{error};`.
template <typename E> struct Failure { E error; };
template <typename E> Failure(E) -> Failure<E>;

template <typename T, typename E> class [[nodiscard]] Result {
  public:
    // A value-initialised T, as std::expected makes one (Asio's co_spawn
    // needs it to report an exception).
    Result() = default;
    Result(const T& value) : v_(std::in_place_index<0>, value) {}
    Result(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}
    template <typename G> Result(Failure<G> f) : v_(std::in_place_index<1>, std::move(f.error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    // The value; only when ok() (otherwise std::bad_variant_access: a
    // caller that did not look first is a bug).
    T& operator*() & { return std::get<0>(v_); }
    const T& operator*() const& { return std::get<0>(v_); }
    T&& operator*() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }
    // The value, or `fallback` when there is none.
    T value_or(T fallback) const& { return ok() ? std::get<0>(v_) : std::move(fallback); }

    // The error; only when !ok().
    const E& error() const { return std::get<1>(v_); }

    // Holds a value equal to `value`.
    friend bool operator==(const Result& r, const T& value) { return r.ok() && *r == value; }

  private:
    std::variant<T, E> v_;
};

// Nothing to return but success or a typed error.
template <typename E> class [[nodiscard]] Result<void, E> {
  public:
    Result() = default;
    template <typename G> Result(Failure<G> f) : v_(std::in_place_index<1>, std::move(f.error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const E& error() const { return std::get<1>(v_); }

  private:
    std::variant<std::monostate, E> v_;
};

} // namespace cqmgr
