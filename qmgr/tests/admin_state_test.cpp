// The kept control settings: the document's round trip, ended settings
// read too (the reader logs them), a corrupt document ignored, one limit
// on saving and loading, and the import of an earlier version's
// cqmgr-control.json, with a state store in a temporary directory.
#include "admin_state.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
namespace fs = std::filesystem;

namespace {

std::vector<AdminRecord> sample() {
    return {
        {core::AdminKind::hold, {"smtp", "example.com"}, {2000, "maintenance", 0, 1400}, {}},
        {core::AdminKind::hold, {"relay", ""}, {0, "", 107}, {}},
        {core::AdminKind::cap, {"", "slow.example"}, {}, {2, 0, 0, 1450}},
        {core::AdminKind::cap, {"smtp", "x.example"}, {}, {1, 1500, 0}},
    };
}

// A store in a temporary directory, opened again on demand.
struct StoreDir {
    TempDir dir{"cqmgr-admin-state"};
    std::string path = dir.file("cqmgr-state.lmdb");
    std::shared_ptr<state::Store> open(std::optional<state::Owner> owner = std::nullopt) {
        state::Store::Options o;
        o.no_sync = true;
        o.owner = owner;
        return state::Store::open(
            path, [](const std::string&) {}, o);
    }
};

// Records whose document is `bytes` long, give or take a record.
std::vector<AdminRecord> records_of_size(size_t bytes) {
    auto record = [](size_t i) {
        return AdminRecord{core::AdminKind::hold,
                           {"smtp", "d" + std::to_string(100000 + i) + ".example"},
                           {0, std::string(4000, 'r'), 0},
                           {}};
    };
    const size_t one = encode_admin_records({record(0)}).size();
    const size_t per = encode_admin_records({record(0), record(1)}).size() - one;
    std::vector<AdminRecord> out;
    for (size_t i = 0; one + i * per <= bytes; ++i)
        out.push_back(record(i));
    return out;
}

} // namespace

TEST(AdminState, EncodeDecodeRoundTrip) {
    auto back = decode_admin_records(encode_admin_records(sample()));
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(*back, sample());
}

// When a setting was set is kept with it; documents of earlier versions
// have no "since" and read as "not known".
TEST(AdminState, WhenASettingWasSetIsKept) {
    const std::string text = encode_admin_records(sample());
    EXPECT_NE(text.find(R"("reason":"maintenance","since":1400,)"), std::string::npos) << text;
    EXPECT_NE(text.find(R"({"reason":"","transport":"relay","uid":107,"until":null})"),
              std::string::npos)
        << text;
    auto old = decode_admin_records(
        R"({"version":1,"suspend":[{"transport":"smtp","until":null,"reason":"","uid":3}],)"
        R"("throttle":[]})");
    ASSERT_TRUE(old) << old.error().message();
    ASSERT_EQ(old->size(), 1u);
    EXPECT_EQ((*old)[0].hold.since, 0);
    EXPECT_FALSE(decode_admin_records(R"({"version":1,"suspend":[{"transport":"smtp",)"
                                      R"("until":null,"reason":"","uid":3,"since":-1}],)"
                                      R"("throttle":[]})"));
}

TEST(AdminState, MalformedDocumentsAreRefused) {
    for (
        std::string text : {
            "",
            "{",
            "[]",
            R"({"version":2,"suspend":[],"throttle":[]})",
            R"({"version":1,"suspend":[{"until":null,"reason":"","uid":0}],"throttle":[]})",
            R"({"version":1,"suspend":[],"throttle":[{"transport":"smtp","concurrency":2,"until":null,"uid":0}]})",
            R"({"version":1,"suspend":[],"throttle":[{"destination":"d","concurrency":0,"until":null,"uid":0}]})",
            R"({"version":1,"suspend":[{"transport":"smtp","until":"soon","reason":"","uid":0}],"throttle":[]})",
            R"({"version":1,"suspend":[{"transport":"smtp","until":-5,"reason":"","uid":0}],"throttle":[]})",
        }) {
        auto records = decode_admin_records(text);
        ASSERT_FALSE(records) << text;
        EXPECT_EQ(records.error().kind, state::SettingsError::Kind::malformed) << text;
        EXPECT_FALSE(records.error().message().empty()) << text;
    }
}

TEST(AdminState, SavesAndLoadsBackAcrossReopening) {
    StoreDir d;
    auto store = d.open();
    ASSERT_TRUE(store);
    AdminState state(store);
    EXPECT_TRUE(state.load().empty()); // nothing kept yet
    ASSERT_TRUE(state.save(sample()));
    EXPECT_EQ(state.load(), sample());
    store.reset();
    state = AdminState(d.open());
    EXPECT_EQ(state.load(), sample());
    ASSERT_TRUE(state.save({}));
    EXPECT_TRUE(state.load().empty());
    // Nothing in the directory but the store.
    EXPECT_FALSE(fs::exists(d.dir.path() / "cqmgr-control.json"));
}

TEST(AdminState, CorruptDocumentIsIgnoredAndReplaced) {
    StoreDir d;
    auto store = d.open();
    ASSERT_TRUE(store->put_control("{\"version\":1,\"suspend\":["));
    AdminState state(store);
    EXPECT_TRUE(state.load().empty());
    ASSERT_TRUE(state.save(sample()));
    EXPECT_EQ(state.load(), sample());
}

TEST(AdminState, WithoutStoreNothingIsKept) {
    AdminState state;
    EXPECT_TRUE(state.load().empty());
    EXPECT_FALSE(state.save(sample()));
}

TEST(AdminState, OneLimitOnSavingAndLoading) {
    // What save() accepts, load() reads back; what load() would refuse,
    // save() does not write (the settings kept before stay).
    StoreDir d;
    AdminState state(d.open());
    auto near = records_of_size(state::max_control_bytes - 8000);
    ASSERT_TRUE(AdminState::fits(near));
    ASSERT_TRUE(state.save(near));
    EXPECT_EQ(AdminState(d.open()).load(), near);
    auto over = records_of_size(state::max_control_bytes + 8000);
    EXPECT_FALSE(AdminState::fits(over));
    EXPECT_FALSE(state.save(over));
    EXPECT_EQ(state.load(), near);
    auto refused = decode_admin_records(encode_admin_records(over));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, state::SettingsError::Kind::too_long);
    EXPECT_NE(refused.error().message().find("longer than"), std::string::npos)
        << refused.error().message();
}

TEST(AdminState, ImportsTheFileOfAnEarlierVersionOnce) {
    StoreDir d;
    d.dir.write("cqmgr-control.json", encode_admin_records(sample()));
    auto store = d.open();
    AdminState::import_file(*store, d.dir.str(), std::nullopt);
    EXPECT_EQ(AdminState(store).load(), sample());
    EXPECT_FALSE(fs::exists(d.dir.path() / "cqmgr-control.json"));
    EXPECT_TRUE(fs::exists(d.dir.path() / "cqmgr-control.json.imported"));
    // Once: a file found later is not read over what the store keeps.
    d.dir.write("cqmgr-control.json", encode_admin_records({}));
    AdminState::import_file(*store, d.dir.str(), std::nullopt);
    EXPECT_EQ(AdminState(store).load(), sample());
    EXPECT_TRUE(fs::exists(d.dir.path() / "cqmgr-control.json"));
}

TEST(AdminState, ImportLeavesALinkAndABadFileAlone) {
    StoreDir d;
    std::string target = d.dir.write("elsewhere.json", encode_admin_records(sample()));
    fs::create_symlink(target, d.dir.path() / "cqmgr-control.json");
    auto store = d.open();
    AdminState::import_file(*store, d.dir.str(), std::nullopt);
    EXPECT_TRUE(AdminState(store).load().empty());
    EXPECT_TRUE(fs::is_symlink(d.dir.path() / "cqmgr-control.json"));
    fs::remove(d.dir.path() / "cqmgr-control.json");
    d.dir.write("cqmgr-control.json", "{\"version\":1,\"suspend\":[");
    AdminState::import_file(*store, d.dir.str(), std::nullopt);
    EXPECT_TRUE(AdminState(store).load().empty());
    EXPECT_TRUE(fs::exists(d.dir.path() / "cqmgr-control.json"));
    // A hard link is not taken either.
    fs::remove(d.dir.path() / "cqmgr-control.json");
    fs::create_hard_link(target, d.dir.path() / "cqmgr-control.json");
    AdminState::import_file(*store, d.dir.str(), std::nullopt);
    EXPECT_TRUE(AdminState(store).load().empty());
}

TEST(AdminState, RootImportsTheRootFileOfAnEarlierVersionInMailOwnersDirectory) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    // mail_owner: nobody.  The earlier version wrote the file as root, 0600.
    const state::Owner owner{65534, 65534};
    StoreDir d;
    ASSERT_EQ(::chown(d.dir.str().c_str(), owner.uid, owner.gid), 0);
    std::string file = d.dir.write("cqmgr-control.json", encode_admin_records(sample()));
    ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
    auto store = d.open(owner);
    ASSERT_TRUE(store);
    AdminState::import_file(*store, d.dir.str(), owner);
    EXPECT_EQ(AdminState(store).load(), sample());
    EXPECT_TRUE(fs::exists(d.dir.path() / "cqmgr-control.json.imported"));
    // The store is mail_owner's.
    struct stat st;
    ASSERT_EQ(::stat(d.path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, owner.uid);
}

TEST(AdminState, ReplyRuleActionsAreKeptNextToTheSettings) {
    StoreDir d;
    state::ControlSetting rule;
    rule.kind = state::ControlSetting::Kind::rule;
    rule.transport = "smtp";
    rule.destination = "yahoo.example";
    rule.until = 5000;
    rule.reason = "4.7.0 host mx said: 421 4.7.0 [TSS04] unexpected volume";
    rule.action = "suspend destination after 3/10m for 1h";
    rule.rule = "pcre:/etc/postfix/reply_actions, line 2";
    rule.since = 1400;
    state::ControlSetting counted = rule;
    counted.destination.clear(); // a whole transport's
    counted.until = 0;
    counted.deliveries = 7;
    state::ControlSetting sender = rule; // on one sender group's mail
    sender.sender = "campaign.example";
    {
        AdminState state(d.open());
        EXPECT_TRUE(state.load_rules().empty());
        ASSERT_TRUE(state.save(sample()));
        ASSERT_TRUE(state.save_rules({rule, counted, sender}));
        // Each half is saved with the other.
        ASSERT_TRUE(state.save({sample()[0]}));
    }
    {
        AdminState again(d.open());
        EXPECT_EQ(again.load(), (std::vector<AdminRecord>{sample()[0]}));
        EXPECT_EQ(again.load_rules(), (std::vector<state::ControlSetting>{rule, counted, sender}));
        ASSERT_TRUE(again.save_rules({}));
    }
    {
        AdminState last(d.open());
        EXPECT_TRUE(last.load_rules().empty());
        EXPECT_EQ(last.load(), (std::vector<AdminRecord>{sample()[0]}));
    }
    // An earlier version's document has no "rule"; a rule without a
    // transport is refused.
    auto old = state::decode_control_settings(R"({"version":1,"suspend":[],"throttle":[]})");
    ASSERT_TRUE(old);
    EXPECT_TRUE(old->empty());
    EXPECT_FALSE(state::decode_control_settings(
        R"({"version":1,"suspend":[],"throttle":[],"rule":[{"destination":"d","action":"a",)"
        R"("rule":"r","reason":"","since":1,"until":null,"deliveries":null}]})"));
    // A sender group's names its group and a destination.
    EXPECT_FALSE(state::decode_control_settings(
        R"({"version":1,"suspend":[],"throttle":[],"rule":[{"transport":"smtp","action":"a",)"
        R"("rule":"r","reason":"","since":1,"until":null,"deliveries":null,"sender":"g"}]})"));
}
