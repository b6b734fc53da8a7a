// Refill: a reply tree rewritten in place keeps its order and values, and
// follows a change of shape.
#include "cqmgr/control/refill.hpp"

#include <gtest/gtest.h>

namespace cqmgr::control {
namespace {

// Writes the object the way a reply builder would.
void write(Json& j, int n, const std::string& name, bool with_extra) {
    Refill f(j);
    f.string("name", name);
    f["n"] = n;
    if (with_extra) f["extra"] = true;
    Refill inner(f["inner"]);
    inner["x"] = n * 2;
}

TEST(Refill, FirstWriteKeepsTheOrderWritten) {
    Json j;
    write(j, 1, "a", false);
    EXPECT_EQ(j.dump(), R"({"name":"a","n":1,"inner":{"x":2}})");
}

TEST(Refill, RewriteReusesMembersAndMatchesAFreshTree) {
    Json j;
    write(j, 1, "a", false);
    const std::string* name = &j["name"].get_ref<const Json::string_t&>();
    write(j, 7, "a longer name than fits in place", false);
    Json fresh;
    write(fresh, 7, "a longer name than fits in place", false);
    EXPECT_EQ(j.dump(), fresh.dump());
    EXPECT_EQ(&j["name"].get_ref<const Json::string_t&>(), name); // the same string object
}

TEST(Refill, ShapeChangesBothWays) {
    Json j;
    write(j, 1, "a", false);
    write(j, 2, "b", true);
    EXPECT_EQ(j.dump(), R"({"name":"b","n":2,"extra":true,"inner":{"x":4}})");
    write(j, 3, "c", false);
    EXPECT_EQ(j.dump(), R"({"name":"c","n":3,"inner":{"x":6}})");
}

TEST(Refill, AValueOfAnotherTypeIsReplaced) {
    Json j = {{"name", 5}};
    {
        Refill f(j);
        f.string("name", "now a string");
    }
    EXPECT_EQ(j.dump(), R"({"name":"now a string"})");
    Json not_object = 3;
    {
        Refill f(not_object);
        f["a"] = 1;
    }
    EXPECT_EQ(not_object.dump(), R"({"a":1})");
}

TEST(Refill, ResizeArrayKeepsTheFirstElements) {
    Json list;
    resize_array(list, 2);
    write(list[0], 1, "a", false);
    write(list[1], 2, "b", false);
    resize_array(list, 1);
    EXPECT_EQ(list.dump(), R"([{"name":"a","n":1,"inner":{"x":2}}])");
    resize_array(list, 2);
    EXPECT_TRUE(list[1].is_null());
}

} // namespace
} // namespace cqmgr::control
