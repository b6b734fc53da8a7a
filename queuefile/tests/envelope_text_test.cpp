// The packed text attributes: each field reads back what was set last, set
// and unset are told apart, and copies are deep.
#include "cqmgr/queuefile/envelope_text.hpp"

#include <gtest/gtest.h>
#include <random>
#include <string>

namespace cqmgr::queuefile {
namespace {

using F = EnvelopeText::Field;

TEST(EnvelopeText, FieldsStartEmptyAndUnset) {
    EnvelopeText t;
    for (int i = 0; i < EnvelopeText::count; ++i) {
        EXPECT_EQ(t.get(static_cast<F>(i)), "");
        EXPECT_FALSE(t.has(static_cast<F>(i)));
        EXPECT_FALSE(t.find(static_cast<F>(i)));
    }
}

TEST(EnvelopeText, EmptyValueCountsAsSet) {
    EnvelopeText t;
    t.set(EnvelopeText::filter, "");
    EXPECT_TRUE(t.has(EnvelopeText::filter));
    ASSERT_TRUE(t.find(EnvelopeText::filter));
    EXPECT_EQ(*t.find(EnvelopeText::filter), "");
    t.reset(EnvelopeText::filter);
    EXPECT_FALSE(t.find(EnvelopeText::filter));
}

TEST(EnvelopeText, SettingFromItsOwnTextIsSafe) {
    EnvelopeText t;
    t.set(EnvelopeText::client_name, "mail.example.org");
    t.set(EnvelopeText::client_helo, t.get(EnvelopeText::client_name).substr(5));
    t.set(EnvelopeText::client_name, t.get(EnvelopeText::client_name).substr(0, 4));
    EXPECT_EQ(t.get(EnvelopeText::client_name), "mail");
    EXPECT_EQ(t.get(EnvelopeText::client_helo), "example.org");
}

// A field longer than 65,535 bytes widens the lengths; shrinking it
// narrows them again, and every other field keeps its text throughout.
TEST(EnvelopeText, LongFieldsKeepEveryLength) {
    EnvelopeText t;
    t.set(EnvelopeText::client_name, "before");
    t.set(EnvelopeText::verp_delims, "+=");
    const std::string huge(70000, 'h');
    t.set(EnvelopeText::client_helo, huge);
    EXPECT_EQ(t.get(EnvelopeText::client_helo), huge);
    EXPECT_EQ(t.get(EnvelopeText::client_name), "before");
    EXPECT_EQ(t.get(EnvelopeText::verp_delims), "+=");
    EnvelopeText copy(t);
    EXPECT_EQ(copy.get(EnvelopeText::client_helo), huge);
    EXPECT_EQ(copy.get(EnvelopeText::verp_delims), "+=");
    t.set(EnvelopeText::sasl_sender, "after");
    EXPECT_EQ(t.get(EnvelopeText::client_helo), huge);
    EXPECT_EQ(t.get(EnvelopeText::sasl_sender), "after");
    t.set(EnvelopeText::client_helo, "short");
    EXPECT_EQ(t.get(EnvelopeText::client_helo), "short");
    EXPECT_EQ(t.get(EnvelopeText::client_name), "before");
    EXPECT_EQ(t.get(EnvelopeText::sasl_sender), "after");
    EXPECT_EQ(t.get(EnvelopeText::verp_delims), "+=");
}

// Random sets and resets against one std::string per field, with copies
// and moves along the way.
TEST(EnvelopeText, MatchesPlainStringsUnderRandomEdits) {
    std::mt19937 rng(17);
    EnvelopeText t;
    std::string want[EnvelopeText::count];
    bool set[EnvelopeText::count] = {};
    for (int step = 0; step < 5000; ++step) {
        auto f = static_cast<F>(rng() % EnvelopeText::count);
        switch (rng() % 8) {
        case 0:
            t.reset(f);
            want[f].clear();
            set[f] = false;
            break;
        case 1: {
            EnvelopeText copy(t);
            t = EnvelopeText();
            t = copy;
            break;
        }
        case 2: {
            EnvelopeText moved(std::move(t));
            ASSERT_FALSE(t.has(f)); // NOLINT: moved from, then checked empty
            ASSERT_EQ(t.get(f), "");
            t = std::move(moved);
            break;
        }
        default: {
            // Now and then longer than 16-bit lengths can hold.
            size_t n = rng() % 64 == 0 ? 65530 + rng() % 12 : rng() % 40;
            std::string v(n, static_cast<char>('a' + rng() % 26));
            t.set(f, v);
            want[f] = v;
            set[f] = true;
        }
        }
        for (int i = 0; i < EnvelopeText::count; ++i) {
            ASSERT_EQ(t.get(static_cast<F>(i)), want[i]) << "step " << step << " field " << i;
            ASSERT_EQ(t.has(static_cast<F>(i)), set[i]) << "step " << step << " field " << i;
        }
    }
}

TEST(EnvelopeTextDraft, AppliesItsChangesOverTheBaseOnce) {
    EnvelopeText t;
    t.set(EnvelopeText::client_name, "kept");
    t.set(EnvelopeText::filter, "smtp:[127.0.0.1]:10025");
    t.set(EnvelopeText::log_ident, "replaced");
    EnvelopeText::Draft d(t);
    EXPECT_TRUE(d.has(EnvelopeText::filter));
    d.reset(EnvelopeText::filter);
    EXPECT_FALSE(d.has(EnvelopeText::filter));
    d.set(EnvelopeText::log_ident, "first");
    d.set(EnvelopeText::log_ident, "second"); // the last one counts
    d.set(EnvelopeText::encoding, "");
    EXPECT_TRUE(d.has(EnvelopeText::encoding));
    EXPECT_EQ(t.get(EnvelopeText::log_ident), "replaced"); // nothing applied yet
    d.commit(t);
    EXPECT_EQ(t.get(EnvelopeText::client_name), "kept");
    EXPECT_FALSE(t.has(EnvelopeText::filter));
    EXPECT_EQ(t.get(EnvelopeText::filter), "");
    EXPECT_EQ(t.get(EnvelopeText::log_ident), "second");
    EXPECT_TRUE(t.has(EnvelopeText::encoding));
    EXPECT_FALSE(t.has(EnvelopeText::redirect));
}

// Random drafts over a random base agree with the same edits made on the
// EnvelopeText one by one, long fields included.
TEST(EnvelopeTextDraft, MatchesEditsMadeOneByOne) {
    std::mt19937 rng(23);
    EnvelopeText direct, drafted;
    for (int round = 0; round < 300; ++round) {
        EnvelopeText::Draft d(drafted);
        int edits = static_cast<int>(rng() % 20);
        for (int k = 0; k < edits; ++k) {
            auto f = static_cast<F>(rng() % EnvelopeText::count);
            if (rng() % 5 == 0) {
                direct.reset(f);
                d.reset(f);
            } else {
                size_t n = rng() % 50 == 0 ? 65530 + rng() % 12 : rng() % 30;
                std::string v(n, static_cast<char>('a' + rng() % 26));
                direct.set(f, v);
                d.set(f, v);
            }
            ASSERT_EQ(d.has(f), direct.has(f));
        }
        d.commit(drafted);
        for (int i = 0; i < EnvelopeText::count; ++i) {
            ASSERT_EQ(drafted.get(static_cast<F>(i)), direct.get(static_cast<F>(i)))
                << "round " << round << " field " << i;
            ASSERT_EQ(drafted.has(static_cast<F>(i)), direct.has(static_cast<F>(i)));
        }
    }
}

} // namespace
} // namespace cqmgr::queuefile
