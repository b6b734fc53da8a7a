// NullList writes the bytes AttrWriter's null format writes, for any mix of
// attributes: values with NULs, long values, numbers at their limits, data
// of every length (zeros and not), and lists long enough to make it grow
// its buffer.
#include "cqmgr/protocol/attr_writer.hpp"
#include "cqmgr/protocol/null_list.hpp"

#include <gtest/gtest.h>
#include <random>

namespace cqmgr::protocol {
namespace {

TEST(NullList, SameBytesAsAttrWriter) {
    std::mt19937 rng(17);
    const int64_t numbers[] = {0, 1, -1, 4294967295, 4294967296, INT64_MIN, INT64_MAX, 1027};
    for (int round = 0; round < 2000; ++round) {
        AttrWriter reference;
        std::string out = "prefix";
        std::vector<std::string> keep; // values must outlive the list's flush
        keep.reserve(400);
        {
            NullList list(out);
            int n = static_cast<int>(rng() % 150);
            for (int i = 0; i < n; ++i) {
                // The names are literals, as NullList wants them.
                auto with_name = [&](auto&& write) {
                    switch (rng() % 4) {
                    case 0:
                        return write("flags");
                    case 1:
                        return write("queue_id");
                    case 2:
                        return write("x");
                    default:
                        return write("a_rather_long_attribute_name");
                    }
                };
                switch (rng() % 5) {
                case 0: {
                    std::string v(rng() % 40, 'v');
                    for (auto& c : v)
                        c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 26);
                    keep.push_back(std::move(v));
                    with_name([&](const auto& name) {
                        reference.str(name, keep.back());
                        list.str(name, keep.back());
                    });
                    break;
                }
                case 1: {
                    int64_t v = numbers[rng() % std::size(numbers)];
                    with_name([&](const auto& name) {
                        reference.num(name, v);
                        list.num(name, v);
                    });
                    break;
                }
                case 2: {
                    int64_t v = numbers[rng() % std::size(numbers)];
                    with_name([&](const auto& name) {
                        reference.lnum(name, v);
                        list.lnum(name, v);
                    });
                    break;
                }
                case 3: {
                    std::string v(rng() % 193, '\0');
                    if (rng() % 2)
                        for (auto& c : v)
                            c = static_cast<char>(rng() % 3 ? 0 : rng() % 256);
                    keep.push_back(std::move(v));
                    with_name([&](const auto& name) {
                        reference.data(name, keep.back());
                        list.data(name, keep.back());
                    });
                    break;
                }
                default:
                    reference.end();
                    list.end();
                }
            }
        }
        ASSERT_EQ(out, "prefix" + reference.bytes()) << "round " << round;
    }
}

TEST(NullList, EmptyListWritesNothing) {
    std::string out;
    { NullList list(out); }
    EXPECT_EQ(out, "");
}

} // namespace
} // namespace cqmgr::protocol
