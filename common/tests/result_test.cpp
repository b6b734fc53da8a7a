// The typed-error Result: a value or an error, never both, and each only
// where it is.
#include "cqmgr/common/result.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <string>

using cqmgr::Failure;
using cqmgr::Result;

namespace {
struct Oops {
    enum class Kind { small, big } kind;
    int n = 0;
};

Result<std::string, Oops> make(int n) {
    if (n < 0) return Failure{Oops{Oops::Kind::small, n}};
    return std::string(static_cast<size_t>(n), 'x');
}

Result<void, Oops> check(int n) {
    if (n > 9) return Failure{Oops{Oops::Kind::big, n}};
    return {};
}
} // namespace

TEST(Result, HoldsTheValue) {
    auto r = make(3);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(*r, "xxx");
    EXPECT_EQ(r->size(), 3u);
    EXPECT_EQ(r.value_or("none"), "xxx");
    EXPECT_EQ(r, std::string("xxx"));
    EXPECT_FALSE(make(-1) == std::string(""));
    EXPECT_EQ(make(-1).value_or("none"), "none");
}

TEST(Result, HoldsTheTypedError) {
    auto r = make(-2);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, Oops::Kind::small);
    EXPECT_EQ(r.error().n, -2);
    EXPECT_THROW(*r, std::bad_variant_access);
}

TEST(Result, ValueMovesOut) {
    Result<std::unique_ptr<int>, Oops> r(std::make_unique<int>(7));
    std::unique_ptr<int> p = *std::move(r);
    EXPECT_EQ(*p, 7);
}

TEST(Result, VoidIsSuccessOrError) {
    EXPECT_TRUE(check(1));
    auto r = check(12);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, Oops::Kind::big);
}

TEST(Result, SameTypeForValueAndErrorStaysApart) {
    Result<int, int> v(5);
    Result<int, int> e(Failure{6});
    EXPECT_TRUE(v);
    EXPECT_EQ(*v, 5);
    EXPECT_FALSE(e);
    EXPECT_EQ(e.error(), 6);
}
