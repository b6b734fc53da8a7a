// Taking a message in on a scratch queue directory, with trivial-rewrite
// played in-process: claiming a file (taken, gone, still locked, not
// openable now, damaged), the g+r and g+x modes, routing a batch through
// the resolver's cache and through trivial-rewrite (its failure flag, its
// outage, a redirect, a content filter, the double-bounce address), a
// message's sender group from its header class, and reading later batches.
#include "daemon_fixture.hpp"
#include "scan.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using namespace cqmgr::qmgr::testing;

namespace {
// Claims `id`, expecting a message.
Message* take(Parts& p, const std::string& id, mode_t mode = 0700) {
    auto c = p.claim(id, "incoming", 0, mode);
    EXPECT_TRUE(p.taken) << p.log.text();
    EXPECT_FALSE(c.pause || c.corrupt);
    return p.taken;
}

// Finishes batch `b` of `m` as the coordinator does, then sets `done`.
// (A function, not a lambda: a coroutine's frame keeps its parameters,
// not a lambda's captures.)
awaitable<void> assign_rest(Intake& intake, Message& m, Intake::Batch b, bool& done) {
    co_await intake.assign_rest(m, std::move(b));
    done = true;
}

// Routes and assigns the batch read last, asking trivial-rewrite where
// needed; true when no answer was needed from it.
bool assign(Parts& p, Message& m) {
    Intake::Batch b;
    if (p.intake.assign_now(m, b)) return true;
    bool done = false;
    asio::co_spawn(p.io, assign_rest(p.intake, m, std::move(b), done), asio::detached);
    run_until(p.io, [&] { return done; });
    return false;
}

// Entries waiting in queue `queue` of `transport` (0: no such queue).
int waiting(Parts& p, const std::string& transport, const std::string& queue) {
    core::Queue* q = p.sched.find_queue(transport, queue);
    return q ? q->todo_count() : 0;
}
} // namespace

TEST(Intake, ClaimTakesAFileIntoActiveAndReadsItsEnvelope) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"b@y.example", "a@x.example"}, p.clock.now() - 10));
    p.q.put("defer", "A1", "old reasons"); // from an earlier attempt
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    EXPECT_FALSE(p.q.exists("incoming", "A1"));
    EXPECT_TRUE(p.q.exists("active", "A1"));
    EXPECT_TRUE(p.log.has("A1: from=<s@example.org>, size=20, nrcpt=2 (queue active)"))
        << p.log.text();
    EXPECT_EQ(m->id, "A1");
    EXPECT_EQ(m->env.recipients.size(), 2u);
    EXPECT_EQ(m->env.rcpt_offset, 0);        // all read
    EXPECT_FALSE(p.q.exists("defer", "A1")); // a fresh attempt, a fresh defer log
    EXPECT_EQ(p.intake.admitted(), 0);       // nothing assigned yet
}

TEST(Intake, ClaimOfAFileGoneMeanwhileIsAWarning) {
    Parts p;
    auto c = p.claim("NOPE");
    EXPECT_FALSE(p.taken);
    EXPECT_FALSE(c.pause);
    EXPECT_FALSE(c.corrupt);
    EXPECT_TRUE(p.log.has("warning: qmgr_active_feed: NOPE: rename from incoming to active: No "
                          "such file or directory"))
        << p.log.text();
}

TEST(Intake, AFileThatCannotBeMovedStaysAndFeedingPauses) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@example.com"}, p.clock.now()));
    std::filesystem::remove("active");
    std::ofstream("active") << "not a directory";
    auto c = p.claim("A1");
    EXPECT_FALSE(p.taken);
    EXPECT_TRUE(c.pause);
    EXPECT_TRUE(p.q.exists("incoming", "A1"));
    EXPECT_EQ(p.log.lines(), std::vector<std::string>{"warning: qmgr_active_feed: A1: rename from "
                                                      "incoming to active: Not a directory"});
}

TEST(Intake, AFileStillBeingDeliveredGoesBackForAMinute) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@example.com"}, p.clock.now()));
    int agent = ::open("incoming/A1", O_RDWR);
    ASSERT_EQ(::flock(agent, LOCK_EX | LOCK_NB), 0);
    auto c = p.claim("A1");
    ::close(agent);
    EXPECT_FALSE(p.taken);
    EXPECT_FALSE(c.pause);
    EXPECT_TRUE(p.log.has("A1: skipped, still being delivered")) << p.log.text();
    ASSERT_TRUE(p.q.exists("incoming", "A1"));
    EXPECT_EQ(p.q.mtime("incoming", "A1"), p.clock.now() + 60);
}

TEST(Intake, ALeftoverStillBeingDeliveredGoesBackToIncoming) {
    Parts p;
    p.q.put("active", "A1", queue_file({"u@example.com"}, p.clock.now()));
    int agent = ::open("active/A1", O_RDWR);
    ASSERT_EQ(::flock(agent, LOCK_EX | LOCK_NB), 0);
    auto c = p.claim("A1", "active");
    ::close(agent);
    EXPECT_FALSE(p.taken);
    EXPECT_FALSE(p.log.has_part("skipped"));
    ASSERT_TRUE(p.q.exists("incoming", "A1"));
    EXPECT_EQ(p.q.mtime("incoming", "A1"), p.clock.now());
}

TEST(Intake, AFileThatCannotBeOpenedNowGoesBackAndFeedingPauses) {
    SKIP_UNLESS_DESCRIPTORS_MAY_RUN_OUT();
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@example.com"}, p.clock.now()));
    Intake::Claimed c;
    {
        NoMoreDescriptors limit;
        c = p.claim("A1");
    }
    EXPECT_FALSE(p.taken);
    EXPECT_TRUE(c.pause);
    EXPECT_FALSE(c.corrupt);
    EXPECT_EQ(p.log.lines(),
              std::vector<std::string>{"warning: open active A1: Too many open files"});
    EXPECT_TRUE(p.q.exists("incoming", "A1"));
    EXPECT_FALSE(p.q.exists("active", "A1"));
}

TEST(Intake, ADamagedFileIsNotTakenAndSaysWhy) {
    Parts p;
    p.q.put("incoming", "A1", "garbage");
    auto c = p.claim("A1");
    EXPECT_FALSE(p.taken);
    EXPECT_TRUE(c.corrupt); // the caller quarantines it
    EXPECT_FALSE(c.pause);
    EXPECT_TRUE(p.q.exists("active", "A1"));
    // The record reader's complaint with the file's path, then qmgr's
    // with the queue ID, as stock words them.
    EXPECT_EQ(p.log.lines(),
              (std::vector<std::string>{
                  "warning: active/A1: unexpected EOF in data, record type 103 length 97",
                  "warning: A1: message rejected: missing end record"}));
}

TEST(Intake, ATruncatedFileIsCorruptWithStockWording) {
    Parts p;
    std::string file = queue_file({"u@example.com"}, p.clock.now());
    p.q.put("incoming", "A1", file.substr(0, file.size() - 2)); // no end record
    auto c = p.claim("A1");
    EXPECT_TRUE(c.corrupt);
    EXPECT_EQ(p.log.lines(),
              (std::vector<std::string>{"A1: from=<s@example.org>, size=20, nrcpt=1 (queue active)",
                                        "warning: A1: message rejected: missing end record"}));
}

TEST(Intake, AFlushRequestOnTheFileIsTakenAndCleared) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@example.com"}, p.clock.now()),
            0700 | queuefile::qmode::unthrottle);
    auto m = take(p, "A1", 0700 | queuefile::qmode::unthrottle);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->unthrottle);
    struct stat st {};
    ::stat("active/A1", &st);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(Intake, ForceExpiredWithReasonsOnFileEndsWithoutDeliveries) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@example.com"}, p.clock.now()),
            0700 | queuefile::qmode::expire);
    p.q.put("defer", "A1", "reasons");
    auto c = p.claim("A1", "incoming", 0, 0700 | queuefile::qmode::expire);
    Message* m = p.taken;
    ASSERT_TRUE(m);
    EXPECT_TRUE(c.keep_defer_log);
    EXPECT_TRUE(m->force_expire);
    EXPECT_EQ(m->flags, message_flag::defer);
    EXPECT_TRUE(m->env.recipients.empty());
    EXPECT_TRUE(p.q.exists("defer", "A1"));
    EXPECT_EQ(p.intake.admitted(), 1);
    p.intake.forget(*m);
    EXPECT_EQ(p.intake.admitted(), 0);
}

TEST(Intake, AMessagesHeaderClassGivesItsSenderGroup) {
    Parts p;
    std::ofstream("classes.regexp") << "/^List-Id:.*<news\\.example\\.com>/ newsletters\n";
    p.intake.use_senders(
        SenderGroups::open({"inline:{ newsletters=concurrency=1, listed.example=concurrency=5 }"},
                           {}, {"regexp:" + std::filesystem::absolute("classes.regexp").string()}));
    auto put = [&](const std::string& id, const std::string& sender) {
        qftest::QfBuilder b;
        b.envelope = queuefile::encode_record('T', std::to_string(p.clock.now()) + " 0") +
                     queuefile::encode_record('S', sender) +
                     queuefile::encode_record('R', "u@dest.example");
        b.rcpts = 1;
        b.content = queuefile::encode_record('N', "List-Id: News <news.example.com>") +
                    queuefile::encode_record('N', "") + queuefile::encode_record('N', "body");
        p.q.put("incoming", id, b.build());
    };
    // Two senders no table lists: the class's one group.
    put("A1", "alice@one.example");
    put("A2", "bob@two.example");
    // A sender listed by domain: its own group, whatever its header says.
    put("A3", "carol@listed.example");
    auto a1 = take(p, "A1");
    auto a2 = take(p, "A2");
    auto a3 = take(p, "A3");
    ASSERT_TRUE(a1 && a2 && a3);
    EXPECT_EQ(a1->sender_group, 1);
    EXPECT_EQ(a2->sender_group, 1);
    EXPECT_EQ(a3->sender_group, 2);
    EXPECT_EQ(p.intake.sender_group_name(1), "class newsletters");
    EXPECT_EQ(p.intake.sender_group_name(2), "listed.example");
}

TEST(Intake, RecipientsAreResolvedInDomainOrderAndAssigned) {
    Parts p;
    std::vector<std::string> asked;
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, &asked));
    p.q.put("incoming", "A1",
            queue_file({"b@y.example", "c@X.example", "a@x.example"}, p.clock.now()));
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    EXPECT_FALSE(assign(p, *m)); // trivial-rewrite had to answer
    EXPECT_EQ(asked, (std::vector<std::string>{"a@x.example", "c@X.example", "b@y.example"}));
    EXPECT_EQ(waiting(p, "smtp", "x.example"), 1); // one entry, two recipients
    EXPECT_EQ(waiting(p, "smtp", "y.example"), 1);
    EXPECT_EQ(p.intake.admitted(), 1);
    EXPECT_EQ(p.counters.resolver_requests, 3u);
}

TEST(Intake, AnswersInTheCacheNeedNoRequest) {
    Parts p;
    std::vector<std::string> asked;
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, &asked));
    p.q.put("incoming", "A1", queue_file({"u@x.example"}, p.clock.now()));
    p.q.put("incoming", "B2", queue_file({"u@x.example"}, p.clock.now()));
    auto a = take(p, "A1");
    auto b = take(p, "B2");
    ASSERT_TRUE(a && b);
    EXPECT_FALSE(assign(p, *a));
    EXPECT_TRUE(assign(p, *b)); // the same question: answered at once
    EXPECT_EQ(asked.size(), 1u);
    EXPECT_EQ(waiting(p, "smtp", "x.example"), 2);
}

TEST(Intake, AResolverFailureGoesToTheRetryTransport) {
    Parts p;
    fake::Server rewrite(
        p.io, "private/rewrite",
        rewrite_service(
            [](const std::string& a) { return a == "bad@x.example" ? "!fail" : "smtp"; }, nullptr));
    p.q.put("incoming", "A1", queue_file({"bad@x.example", "good@x.example"}, p.clock.now()));
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    assign(p, *m);
    EXPECT_EQ(waiting(p, "retry", "4.3.0 address resolver failure"), 1);
    EXPECT_EQ(waiting(p, "smtp", "x.example"), 1);
    EXPECT_TRUE(p.self_deferred.empty());
}

TEST(Intake, WithTheDestinationAndItsRetryQueueDeadTheRecipientIsDeferredInPlace) {
    Parts p;
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, nullptr));
    for (const char* id : {"A1", "B2", "C3"})
        p.q.put("incoming", id, queue_file({"u@x.example"}, p.clock.now()));
    assign(p, *take(p, "A1"));
    core::Queue* dest = p.sched.find_queue("smtp", "x.example");
    ASSERT_TRUE(dest);
    p.sched.queue_mark_dead(*dest, {"4.4.1", "connect refused"}, p.clock.now() + 100);
    // Dead: the next recipient waits on the retry transport...
    assign(p, *take(p, "B2"));
    core::Queue* retry = p.sched.find_queue("retry", "4.4.1 connect refused");
    ASSERT_TRUE(retry);
    EXPECT_TRUE(p.self_deferred.empty());
    // ...and with that dead too, the coordinator defers it itself.
    p.sched.queue_mark_dead(*retry, {"4.4.1", "retry down"}, p.clock.now() + 100);
    assign(p, *take(p, "C3"));
    EXPECT_EQ(p.self_deferred, std::vector<std::string>{"u@x.example: 4.4.1 connect refused"});
}

TEST(Intake, ARewriteServiceNotThereIsWaitedFor) {
    Parts p;
    p.q.put("incoming", "A1", queue_file({"u@x.example"}, p.clock.now()));
    Message* m = take(p, "A1");
    ASSERT_TRUE(m);
    Intake::Batch b;
    ASSERT_FALSE(p.intake.assign_now(*m, b));
    bool done = false;
    asio::co_spawn(p.io, assign_rest(p.intake, *m, std::move(b), done), asio::detached);
    // Stock's warning, then a wait of 10 s before the next connect.
    run_until(p.io,
              [&] { return p.log.has_part("warning: connect #1 to subsystem private/rewrite: "); });
    EXPECT_FALSE(done);
    EXPECT_EQ(p.intake.admitted(), 0);
    EXPECT_EQ(p.sched.recipient_count(), 0);
}

TEST(Intake, ARewriteServiceInTroubleIsAskedAgain) {
    Parts p;
    // The first connection closes without a word; the next ones answer.
    fake::Server rewrite(
        p.io, "private/rewrite",
        [good = rewrite_service(all_smtp, nullptr)](fake::Socket& s, int index) -> awaitable<void> {
            if (index > 0) co_await good(s, index);
        });
    p.q.put("incoming", "A1", queue_file({"u@x.example"}, p.clock.now()));
    Message* m = take(p, "A1");
    ASSERT_TRUE(m);
    assign(p, *m);
    EXPECT_TRUE(p.log.has_part("warning: problem talking to service rewrite: ")) << p.log.text();
    EXPECT_EQ(waiting(p, "smtp", "x.example"), 1);
    EXPECT_EQ(p.intake.admitted(), 1);
}

TEST(Intake, DeferTransportsGoToRetryUnlessFlushed) {
    Parts p("defer_transports = smtp");
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, nullptr));
    p.q.put("incoming", "A1", queue_file({"u@x.example"}, p.clock.now()));
    p.q.put("incoming", "B2", queue_file({"u@y.example"}, p.clock.now()));
    auto a = take(p, "A1");
    assign(p, *a);
    EXPECT_EQ(waiting(p, "retry", "4.3.2 deferred transport"), 1);
    p.claim("B2", "incoming", scan_flag::flush, 0700);
    ASSERT_TRUE(p.taken);
    assign(p, *p.taken);
    EXPECT_EQ(waiting(p, "smtp", "y.example"), 1);
}

TEST(Intake, AddressProbesOverTheirLimitGoToRetry) {
    Parts p("address_verify_pending_request_limit = 1");
    std::vector<std::string> asked;
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, &asked));
    // Probes from verify(8): trace flag MTA_VRFY, resolved as "verify".
    const std::string probe = queuefile::encode_record(
        'A', "trace_flags=" + std::to_string(protocol::del_flag::mta_vrfy));
    for (const char* id : {"A1", "B2", "C3"})
        p.q.put("incoming", id,
                queue_file({std::string("u@") + id + ".example"}, p.clock.now(), "double-bounce@vm",
                           probe));
    // Counted from the claim on: the second is over the limit.
    Message* a = take(p, "A1");
    ASSERT_TRUE(a);
    assign(p, *a);
    Message* b = take(p, "B2");
    ASSERT_TRUE(b);
    assign(p, *b);
    EXPECT_EQ(asked, (std::vector<std::string>{"u@A1.example", "u@B2.example"}));
    EXPECT_EQ(waiting(p, "smtp", "a1.example"), 1);
    EXPECT_EQ(waiting(p, "retry", "4.3.2 too many address verification requests"), 1);
    // Both leave memory: the next one is within the limit again.
    p.intake.forget(*a);
    p.intake.forget(*b);
    Message* c = take(p, "C3");
    ASSERT_TRUE(c);
    assign(p, *c);
    EXPECT_EQ(waiting(p, "smtp", "c3.example"), 1);
}

TEST(Intake, AContentFilterRoutesWithoutTheResolver) {
    Parts p; // no rewrite service: none is asked
    p.q.put("incoming", "A1",
            queue_file({"u@x.example"}, p.clock.now(), "s@example.org",
                       queuefile::encode_record('L', "scan:[127.0.0.1]:10025")));
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    EXPECT_TRUE(assign(p, *m));
    EXPECT_EQ(waiting(p, "scan", "[127.0.0.1]:10025"), 1);
}

TEST(Intake, ARedirectKeepsOneRecipientAtTheCanonicalAddress) {
    Parts p;
    std::vector<std::string> asked;
    fake::Server rewrite(p.io, "private/rewrite", rewrite_service(all_smtp, &asked));
    p.q.put("incoming", "A1",
            queue_file({"a@x.example", "b@x.example"}, p.clock.now(), "s@example.org",
                       queuefile::encode_record('>', "else")));
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    EXPECT_FALSE(assign(p, *m));
    EXPECT_EQ(asked, std::vector<std::string>{"else@rewritten"});
}

TEST(Intake, TheDoubleBounceAddressIsDiscardedAndMarkedDone) {
    Parts p;
    fake::Server rewrite(p.io, "private/rewrite",
                         rewrite_service([](const std::string&) { return "local"; }, nullptr));
    p.q.put("incoming", "A1", queue_file({"double-bounce@vm"}, p.clock.now(), ""));
    auto m = take(p, "A1");
    ASSERT_TRUE(m);
    assign(p, *m);
    EXPECT_TRUE(p.log.has(
        "A1: to=<double-bounce@vm>, relay=none, delay=0, delays=0/0/0/0, dsn=2.0.0, status=sent "
        "(undeliverable postmaster notification discarded)"))
        << p.log.text();
    EXPECT_EQ(p.sched.recipient_count(), 0);
    EXPECT_EQ(m->flags, 0);
    // Done in the file: a second read finds no recipient.
    queuefile::Envelope env;
    auto r = p.q.store.read("A1", env, 10);
    ASSERT_TRUE(r.ok);
    EXPECT_TRUE(env.recipients.empty());
}

namespace {
const char* small_batches = "qmgr_message_recipient_limit = 2\n"
                            "qmgr_message_recipient_minimum = 2\n"
                            "qmgr_message_active_limit = 2";

// A message of three recipients, read two at a time.
Message* three_recipients(Parts& p) {
    p.q.put("incoming", "A1",
            queue_file({"a@x.example", "b@x.example", "c@x.example"}, p.clock.now()));
    auto m = take(p, "A1");
    EXPECT_TRUE(m && m->env.rcpt_offset != 0);
    if (m) m->env.recipients.clear();
    return m;
}
} // namespace

TEST(Intake, ALaterBatchIsRead) {
    Parts p(small_batches);
    auto m = three_recipients(p);
    ASSERT_TRUE(m);
    EXPECT_EQ(p.intake.read_batch(*m, 2), Intake::BatchRead::ok);
    ASSERT_EQ(m->env.recipients.size(), 1u);
    EXPECT_EQ(m->env.rcpt_offset, 0);
}

TEST(Intake, ALaterBatchOfAFileGoneFails) {
    Parts p(small_batches);
    auto m = three_recipients(p);
    ASSERT_TRUE(m);
    ::unlink("active/A1");
    EXPECT_EQ(p.intake.read_batch(*m, 2), Intake::BatchRead::failed);
    EXPECT_TRUE(p.log.has("warning: open active A1: No such file or directory")) << p.log.text();
}

TEST(Intake, ALaterBatchOfADamagedFileFails) {
    Parts p(small_batches);
    auto m = three_recipients(p);
    ASSERT_TRUE(m);
    ASSERT_EQ(::truncate("active/A1", m->env.rcpt_offset + 3), 0);
    p.log.clear();
    EXPECT_EQ(p.intake.read_batch(*m, 2), Intake::BatchRead::failed);
    EXPECT_EQ(p.log.lines(),
              (std::vector<std::string>{
                  "warning: A1: rcpt count mismatch (1)",
                  "warning: active/A1: unexpected EOF in data, record type 82 length 11",
                  "warning: A1: message rejected: missing end record"}));
}

TEST(Intake, ALaterBatchThatCannotBeOpenedNowIsReadAgainLater) {
    SKIP_UNLESS_DESCRIPTORS_MAY_RUN_OUT();
    Parts p(small_batches);
    auto m = three_recipients(p);
    ASSERT_TRUE(m);
    Intake::BatchRead r;
    {
        NoMoreDescriptors limit;
        r = p.intake.read_batch(*m, 2);
    }
    EXPECT_EQ(r, Intake::BatchRead::again);
    EXPECT_TRUE(p.log.has("warning: open active A1: Too many open files")) << p.log.text();
    EXPECT_EQ(p.intake.read_batch(*m, 2), Intake::BatchRead::ok);
}
