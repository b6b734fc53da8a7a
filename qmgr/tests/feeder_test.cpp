// The feeder on a scratch queue directory: which files of incoming,
// deferred and active it hands to the coordinator and in what order, what
// it leaves (not ready, not due yet, in memory already, no room), the
// triggers, the pause after a file-system error, and cleanup's in-flow
// tokens after each pass.
#include "daemon_fixture.hpp"
#include "dead_backlog.hpp"
#include "feeder.hpp"

#include <gtest/gtest.h>
#include <set>
#include <sys/time.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using namespace cqmgr::qmgr::testing;

namespace {
// Cleanup's token pipe as a count; each change the feeder made is noted.
struct TokenPipe final : FlowTokens {
    int in_pipe = 0;
    std::vector<int> changes; // nonzero ones
    int tokens() const override { return in_pipe; }
    int feed_tokens(int change) override {
        if (change == 0) return 0;
        changes.push_back(change);
        in_pipe += change;
        return change > 0 ? change : 0;
    }
};

// A feeder and the coordinator's side of it: a message taken stays in
// memory (`active`) until the test lets it go.
struct Feed : Ground {
    TokenPipe pipe;
    RecoveryRamp ramp{io, params, clock, [this] { feeder.scan_deferred(); }};
    DeadBacklog backlog{params, clock, q.store, sched, ramp.index()};

    std::set<std::string> active;     // in memory
    std::vector<std::string> offered; // "queue/id" in the order offered
    std::vector<int> offered_flags;   // the scan flags of each
    // The answer to the next offer (yes: the message is in memory now).
    std::function<Feeder::Taken(const std::string& id)> answer = [](const std::string&) {
        return Feeder::Taken::yes;
    };
    int flushes = 0;

    Feeder feeder{io,
                  params,
                  clock,
                  q.store,
                  retry,
                  pipe,
                  {.active_count = [this] { return static_cast<int>(active.size()); },
                   .in_memory = [this](const std::string& id) { return active.contains(id); },
                   .take =
                       [this](const std::string& id, const std::string& queue, int flags, mode_t) {
                           offered.push_back(queue + "/" + id);
                           offered_flags.push_back(flags);
                           Feeder::Taken t = answer(id);
                           if (t == Feeder::Taken::yes) active.insert(id);
                           return t;
                       },
                   .flush_dead = [this] { ++flushes; }},
                  counters,
                  ramp,
                  backlog};

    explicit Feed(const std::string& main_cf = "", int verbose = 0) : Ground(main_cf, verbose) {}

    // A complete queue file in `queue` whose not-before time is `mtime`.
    void put(const std::string& queue, const std::string& id, int64_t mtime = 0) {
        q.put(queue, id, queue_file({"u@example.com"}, clock.now()), 0700,
              mtime ? mtime : clock.now());
    }
    // Runs feed passes until none is pending (timers are not waited for).
    void settle() {
        for (;;) {
            if (io.stopped()) io.restart();
            if (io.poll() == 0) break;
        }
    }
    std::set<std::string> offered_set() const { return {offered.begin(), offered.end()}; }
};
} // namespace

TEST(Feeder, ReadyIncomingFilesAreHandedOver) {
    Feed f;
    f.put("incoming", "A1");
    f.put("incoming", "B2");
    f.q.put("incoming", "C3", "half written", 0600); // not complete yet
    f.feeder.start();
    EXPECT_EQ(f.offered.size(), 0u); // the passes run from the event loop
    f.settle();
    EXPECT_EQ(f.offered_set(), (std::set<std::string>{"incoming/A1", "incoming/B2"}));
    EXPECT_TRUE(f.log.lines().empty()) << f.log.text(); // C3 is no news
}

TEST(Feeder, AFileThatIsNoQueueFileIsAWarning) {
    Feed f;
    std::filesystem::create_directory_symlink("/nonexistent", "incoming/B2");
    f.feeder.start();
    f.settle();
    EXPECT_TRUE(f.offered.empty());
    EXPECT_TRUE(f.log.has_part("incoming/B2: uid ")) << f.log.text();
    EXPECT_TRUE(f.log.has_part(": not a regular file"));
}

TEST(Feeder, AFullActiveQueueStopsTheFeedUntilAMessageLeaves) {
    Feed f("qmgr_message_active_limit = 1");
    f.put("incoming", "A1");
    f.put("incoming", "B2");
    f.feeder.start();
    f.settle();
    ASSERT_EQ(f.offered.size(), 1u);
    f.active.clear(); // the message left
    f.feeder.wake();
    f.settle();
    EXPECT_EQ(f.offered_set(), (std::set<std::string>{"incoming/A1", "incoming/B2"}));
}

TEST(Feeder, MessagesInMemoryAreNotOfferedAgain) {
    Feed f;
    f.put("incoming", "A1");
    f.active.insert("A1");
    f.feeder.start();
    f.settle();
    EXPECT_TRUE(f.offered.empty());
}

TEST(Feeder, DeferredFilesWaitForTheirTimeUnlessA) {
    Feed f("", 1);
    f.put("deferred", "D1", f.clock.now() + 100);
    f.put("deferred", "E2", f.clock.now() - 10);
    f.feeder.start();
    f.settle();
    EXPECT_EQ(f.offered, std::vector<std::string>{"deferred/E2"});
    EXPECT_TRUE(f.log.has("qmgr_active_feed: skip D1 (100 seconds)")) << f.log.text();
    // postqueue -f: everything in deferred now.
    f.feeder.on_trigger(std::string("AD\0", 3));
    f.settle();
    EXPECT_EQ(f.offered, (std::vector<std::string>{"deferred/E2", "deferred/D1"}));
    EXPECT_TRUE(f.offered_flags.back() & scan_flag::all);
}

TEST(Feeder, WithTheDueIndexAFileNotDueIsTakenFromTheIndexOnceDue) {
    Feed f("cqmgr_deferred_due_index = yes", 1);
    f.put("deferred", "D1", f.clock.now() + 100);
    f.put("deferred", "E2", f.clock.now() - 10);
    // Directories last changed a while ago: what a pass saw of them holds.
    for (const char* d : {"deferred/D", "deferred/E", "deferred"}) {
        timeval old[2] = {{::time(nullptr) - 10, 0}, {::time(nullptr) - 10, 0}};
        ASSERT_EQ(::utimes(d, old), 0);
    }
    f.feeder.start(); // a full pass: every directory listed, every file looked at
    f.settle();
    EXPECT_EQ(f.offered, std::vector<std::string>{"deferred/E2"});
    EXPECT_TRUE(f.log.has("deferred queue scan: 3 directories listed, 0 unchanged; due index: 1 "
                          "files"))
        << f.log.text();
    // A periodic pass once D1 is due: taken from the index, with no
    // directory listed and no other file looked at.
    f.clock.t += 200;
    f.log.clear();
    f.feeder.scan_deferred();
    f.settle();
    EXPECT_EQ(f.offered, (std::vector<std::string>{"deferred/E2", "deferred/D1"}));
    EXPECT_TRUE(f.log.has("deferred queue scan: 0 directories listed, 3 unchanged; due index: 0 "
                          "files"))
        << f.log.text();
}

TEST(Feeder, TheDeferredScanRunsOnlyWhenAsked) {
    Feed f;
    f.feeder.start();
    f.settle();
    f.put("deferred", "D1", f.clock.now() - 10);
    f.put("incoming", "A1");
    f.feeder.on_trigger("I");
    f.settle();
    EXPECT_EQ(f.offered, std::vector<std::string>{"incoming/A1"});
    f.feeder.scan_deferred();
    f.settle();
    EXPECT_EQ(f.offered, (std::vector<std::string>{"incoming/A1", "deferred/D1"}));
}

TEST(Feeder, AFlushTriggerRevivesTheDeadAndMarksTheScans) {
    Feed f;
    f.feeder.start();
    f.settle();
    f.put("incoming", "A1");
    f.feeder.on_trigger("F");
    EXPECT_EQ(f.flushes, 1);
    f.feeder.on_trigger("I");
    f.settle();
    ASSERT_EQ(f.offered, std::vector<std::string>{"incoming/A1"});
    EXPECT_TRUE(f.offered_flags[0] & scan_flag::flush);
}

TEST(Feeder, LeftoversInActiveAreTakenWhereTheyAreBeforeNewMail) {
    Feed f;
    f.put("active", "L1");
    f.q.put("active", "L2", "half", 0600); // not complete: back to incoming
    f.put("incoming", "A1");
    f.feeder.start();
    f.settle();
    ASSERT_FALSE(f.offered.empty());
    EXPECT_EQ(f.offered[0], "active/L1");
    EXPECT_EQ(f.offered_set(), (std::set<std::string>{"active/L1", "incoming/A1"}));
    EXPECT_FALSE(f.q.exists("active", "L2"));
    EXPECT_TRUE(f.q.exists("incoming", "L2"));
}

TEST(Feeder, AFileSystemErrorPausesTheFeedThenItGoesOn) {
    Feed f("", 1);
    f.put("incoming", "A1");
    f.put("incoming", "B2");
    int offers = 0;
    f.answer = [&](const std::string&) {
        return ++offers == 1 ? Feeder::Taken::pause : Feeder::Taken::yes;
    };
    f.feeder.start();
    f.settle();
    EXPECT_TRUE(f.feeder.paused());
    EXPECT_EQ(f.offered.size(), 1u);
    EXPECT_TRUE(f.log.has("feed paused for 1s")) << f.log.text();
    // After the pause the scan starts over and offers the file again.
    run_until(f.io, [&] { return f.active.size() == 2; });
    EXPECT_FALSE(f.feeder.paused());
    EXPECT_EQ(f.offered.size(), 3u);
}

TEST(Feeder, FilesNotTakenAreLeftForTheNextPass) {
    Feed f;
    f.put("incoming", "A1");
    f.answer = [](const std::string&) { return Feeder::Taken::no; };
    f.feeder.start();
    f.settle();
    EXPECT_EQ(f.offered, std::vector<std::string>{"incoming/A1"});
    EXPECT_FALSE(f.feeder.paused());
    EXPECT_TRUE(f.feeder.scanning().empty());
}

TEST(Feeder, InFlowTokensOnePerIncomingMessageThenATopUp) {
    Feed f("in_flow_delay = 1s\ndefault_process_limit = 10");
    f.put("incoming", "A1");
    f.put("incoming", "B2");
    f.put("deferred", "D1");
    f.feeder.start();
    f.settle();
    EXPECT_EQ(f.offered.size(), 3u);
    EXPECT_EQ(f.offered[1], "deferred/D1"); // the scans take turns
    // One for each message taken from incoming while its scan ran (none
    // for the one from deferred), then the rest up to the process limit
    // once it is over.
    EXPECT_EQ(f.pipe.changes, (std::vector<int>{1, 1, 8}));
    EXPECT_EQ(f.pipe.in_pipe, 10);
    EXPECT_EQ(f.counters.in_flow_tokens, 10u);
}

TEST(Feeder, ASurplusOfTokensIsTakenBack) {
    Feed f("in_flow_delay = 1s\ndefault_process_limit = 10");
    f.pipe.in_pipe = 13;
    f.feeder.start();
    f.settle();
    EXPECT_EQ(f.pipe.changes, std::vector<int>{-3});
    EXPECT_EQ(f.counters.in_flow_tokens, 0u);
}

TEST(Feeder, NoTokensWithoutFlowControl) {
    Feed f("in_flow_delay = 0");
    f.put("incoming", "A1");
    f.feeder.start();
    f.settle();
    EXPECT_EQ(f.offered.size(), 1u);
    EXPECT_TRUE(f.pipe.changes.empty());
}

// The census of deferred/ that the metrics show: the files the passes left
// there, not those taken; with the due index, a file taken from the index
// leaves the census at once while its directory is not listed again.  And
// the start-up scans that /readyz waits for.
TEST(Feeder, TheDeferredCensusCountsWhatStays) {
    for (const char* cf : {"", "cqmgr_deferred_due_index = yes"}) {
        SCOPED_TRACE(cf);
        Feed f(cf);
        f.put("deferred", "D1", f.clock.now() + 100);
        f.put("deferred", "D2", f.clock.now() + 1000);
        f.put("deferred", "E3", f.clock.now() - 10);
        auto age = [] {
            for (const char* d : {"deferred/D", "deferred/E", "deferred"}) {
                timeval old[2] = {{::time(nullptr) - 10, 0}, {::time(nullptr) - 10, 0}};
                ASSERT_EQ(::utimes(d, old), 0);
            }
        };
        age();
        // A message taken moves to active/, as the coordinator moves it.
        f.answer = [&f](const std::string& id) {
            std::filesystem::rename(f.q.store.path("deferred", id), "active/" + id);
            return Feeder::Taken::yes;
        };
        EXPECT_FALSE(f.feeder.deferred_census().has_value());
        EXPECT_FALSE(f.feeder.deferred_scanned());
        f.feeder.start();
        f.settle();
        EXPECT_TRUE(f.feeder.incoming_scanned());
        EXPECT_TRUE(f.feeder.deferred_scanned());
        EXPECT_EQ(f.offered, std::vector<std::string>{"deferred/E3"});
        ASSERT_TRUE(f.feeder.deferred_census().has_value());
        EXPECT_EQ(f.feeder.deferred_census()->files, 2u);
        const int64_t oldest = f.feeder.deferred_census()->oldest;
        if (oldest) {
            EXPECT_NEAR(double(oldest), double(::time(nullptr)), 60);
        }
        EXPECT_EQ(f.feeder.incoming_census()->files, 0u);
        // D1 comes due and is taken; D2 stays.
        f.clock.t += 200;
        f.feeder.scan_deferred();
        f.settle();
        EXPECT_EQ(f.offered, (std::vector<std::string>{"deferred/E3", "deferred/D1"}));
        EXPECT_EQ(f.feeder.deferred_census()->files, 1u);
        // The files were made within the same second or so.
        EXPECT_NEAR(double(f.feeder.deferred_census()->oldest), double(oldest), 1);
    }
}
