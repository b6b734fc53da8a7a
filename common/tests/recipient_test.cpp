// The compact recipient keeps what it was given, in each of its layouts
// (original recipient empty, the address itself, or its own; a DSN
// original recipient or none), through copies, moves and a new address.
#include "cqmgr/common/recipient.hpp"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

using cqmgr::Recipient;

namespace {

void expect(const Recipient& r, int64_t offset, std::string_view address, std::string_view orig,
            std::string_view dsn, int notify) {
    EXPECT_EQ(r.offset(), offset);
    EXPECT_EQ(r.address(), address);
    EXPECT_EQ(r.orig_rcpt(), orig);
    EXPECT_EQ(r.dsn_orcpt(), dsn);
    EXPECT_EQ(r.notify_flags(), notify);
    EXPECT_EQ(std::string(r.address_c_str()), address);
}

TEST(Recipient, KeepsEveryLayout) {
    expect(Recipient(), 0, "", "", "", 0);
    expect(Recipient(5, "", "", "", 0), 5, "", "", "", 0);
    expect(Recipient(7, "a@x", "", "", 0), 7, "a@x", "", "", 0);
    expect(Recipient(7, "a@x", "a@x", "", 0), 7, "a@x", "a@x", "", 0);
    expect(Recipient(7, "a@x", "A@X", "", 0), 7, "a@x", "A@X", "", 0);
    expect(Recipient(7, "a@x", "", "rfc822;o@x", 14), 7, "a@x", "", "rfc822;o@x", 14);
    expect(Recipient(7, "a@x", "a@x", "rfc822;a@x", 2), 7, "a@x", "a@x", "rfc822;a@x", 2);
    expect(Recipient(1LL << 40, "a@x", "o@y", "x;z", 8), 1LL << 40, "a@x", "o@y", "x;z", 8);
    expect(Recipient(3, "", "o@y", "", 0), 3, "", "o@y", "", 0);
    std::string big(70000, 'b');
    expect(Recipient(3, big, big + "c", big + "d", 1), 3, big, big + "c", big + "d", 1);
}

TEST(Recipient, CopiesAndMoves) {
    Recipient a(9, "a@x", "o@y", "x;z", 4);
    Recipient b(a);
    expect(b, 9, "a@x", "o@y", "x;z", 4);
    EXPECT_EQ(a, b);
    Recipient c(std::move(a));
    expect(c, 9, "a@x", "o@y", "x;z", 4);
    expect(a, 9, "", "", "", 4); // moved from: empty strings, still usable
    Recipient d(1, "d@x", "d@x", "", 0);
    d = c;
    expect(d, 9, "a@x", "o@y", "x;z", 4);
    d = Recipient(2, "e@x", "", "", 0);
    expect(d, 2, "e@x", "", "", 0);
    Recipient& alias = d;
    d = alias;
    expect(d, 2, "e@x", "", "", 0);
    std::vector<Recipient> v;
    for (int i = 0; i < 100; ++i)
        v.emplace_back(i, "r" + std::to_string(i) + "@example.com", "", "", 0);
    std::vector<Recipient> w = v;
    for (int i = 0; i < 100; ++i)
        expect(w[i], i, "r" + std::to_string(i) + "@example.com", "", "", 0);
}

TEST(Recipient, NewAddressKeepsTheOriginals) {
    Recipient same(1, "a@x", "a@x", "", 0);
    same.set_address("b@y");
    expect(same, 1, "b@y", "a@x", "", 0);
    Recipient empty(1, "a@x", "", "x;z", 2);
    empty.set_address("b@y");
    expect(empty, 1, "b@y", "", "x;z", 2);
    Recipient stored(1, "a@x", "o@y", "x;z", 2);
    stored.set_address("o@y"); // now the same as the original
    expect(stored, 1, "o@y", "o@y", "x;z", 2);
    stored.set_address(stored.address()); // unchanged
    expect(stored, 1, "o@y", "o@y", "x;z", 2);
    Recipient self(1, "a@x", "o@y", "", 0);
    self.set_address(self.orig_rcpt()); // a view into its own text
    expect(self, 1, "o@y", "o@y", "", 0);
}

TEST(Recipient, IsCompact) {
    EXPECT_LE(sizeof(Recipient), 24u);
}

} // namespace
