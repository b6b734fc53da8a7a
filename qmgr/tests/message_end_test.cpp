// The end of a message on a scratch queue directory, with the bounce
// daemon's services played in-process: removal, deferral with its backoff,
// the bounce, expiry and delay warning notices, a failed notice, a file an
// agent found corrupt, and the next batch of recipients read at the end.
#include "daemon_fixture.hpp"
#include "end_plan.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <optional>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using namespace cqmgr::qmgr::testing;

namespace {
// The notice request a fake service saw, as status_service() notes it.
std::string request(int nrequest, int flags) {
    return "nrequest=" + std::to_string(nrequest) + " flags=" + std::to_string(flags);
}

// A message claimed from incoming as `id`, with `rcpts`, that arrived
// `age` seconds ago; `extra` envelope records after the sender.
Message* claimed(Parts& p, const std::string& id, int64_t age, const std::string& extra = "",
                 std::vector<std::string> rcpts = {"u@example.com"}) {
    p.q.put("incoming", id, queue_file(rcpts, p.clock.now() - age, "s@example.org", extra));
    p.claim(id);
    EXPECT_TRUE(p.taken) << p.log.text();
    return p.taken;
}

MessageEnd::Outcome finish(Parts& p, Message& m) {
    return run_task(p.io, p.end.finish(m));
}
} // namespace

TEST(MessageEnd, EveryRecipientDoneRemovesTheFileAtOnce) {
    Parts p;
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    EXPECT_TRUE(p.end.finish_now(*m));
    EXPECT_FALSE(p.q.exists("active", "A1"));
    EXPECT_TRUE(p.log.has("A1: removed")) << p.log.text();
    EXPECT_EQ(p.counters.messages_removed, 1u);
}

TEST(MessageEnd, FinishNowLeavesWhatNeedsTheWholeEnd) {
    Parts p;
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    m->flags |= message_flag::defer; // a recipient to retry
    EXPECT_FALSE(p.end.finish_now(*m));
    m->flags = 0;
    p.q.put("bounce", "A1", "x"); // a bounce log to send
    EXPECT_FALSE(p.end.finish_now(*m));
    EXPECT_TRUE(p.q.exists("active", "A1"));
    EXPECT_EQ(p.counters.messages_removed, 0u);
}

TEST(MessageEnd, RemovalOfAFileGoneMeanwhileIsAWarning) {
    Parts p;
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    ::unlink("active/A1"); // postsuper -d
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_FALSE(p.log.has("A1: removed"));
    EXPECT_TRUE(p.log.has(
        "warning: qmgr_active_done_3_generic: remove A1 from active: No such file or directory"))
        << p.log.text();
}

TEST(MessageEnd, UndeliveredIsDeferredForItsBackoff) {
    Parts p("", 1);
    auto m = claimed(p, "A1", 1000);
    ASSERT_TRUE(m);
    m->flags |= message_flag::defer;
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_FALSE(p.q.exists("active", "A1"));
    ASSERT_TRUE(p.q.exists("deferred", "A1"));
    // Its age, between minimal_backoff_time and maximal_backoff_time.
    EXPECT_EQ(p.q.mtime("deferred", "A1"), p.clock.now() + 1000);
    EXPECT_TRUE(p.log.has("wakeup A1 after 1000 secs")) << p.log.text();
    EXPECT_EQ(p.counters.messages_deferred, 1u);
    EXPECT_FALSE(p.log.has("A1: removed"));
}

TEST(MessageEnd, BackoffStaysWithinItsBounds) {
    Parts p("minimal_backoff_time = 600s\nmaximal_backoff_time = 2000s");
    auto young = claimed(p, "A1", 10);
    auto old = claimed(p, "B2", 100000);
    ASSERT_TRUE(young && old);
    young->flags |= message_flag::defer;
    old->flags |= message_flag::defer;
    finish(p, *young);
    finish(p, *old);
    EXPECT_EQ(p.q.mtime("deferred", "A1"), p.clock.now() + 600);
    EXPECT_EQ(p.q.mtime("deferred", "B2"), p.clock.now() + 2000);
}

TEST(MessageEnd, BouncedRecipientsGoToTheBounceService) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server bounce(p.io, "private/bounce", status_service(0, &seen));
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    p.q.put("bounce", "A1", "recipient=u@example.com\n");
    EXPECT_FALSE(p.end.finish_now(*m));
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_EQ(seen, std::vector<std::string>{request(protocol::bounce_cmd::flush, 0)});
    EXPECT_EQ(p.counters.messages_bounced, 1u);
    EXPECT_FALSE(p.q.exists("active", "A1"));
    EXPECT_TRUE(p.log.has("A1: removed")) << p.log.text();
}

TEST(MessageEnd, AnEmptyBounceLogIsRemoved) {
    Parts p;
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    p.q.put("bounce", "A1", "");
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_FALSE(p.q.exists("bounce", "A1"));
    EXPECT_EQ(p.counters.messages_bounced, 0u);
    EXPECT_TRUE(p.log.has("A1: removed"));
}

TEST(MessageEnd, AFailedBounceDefersTheMessage) {
    Parts p; // no bounce service at all
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    p.q.put("bounce", "A1", "recipient=u@example.com\n");
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_TRUE(p.log.has("A1: status=deferred (bounce failed)")) << p.log.text();
    EXPECT_TRUE(p.log.has("warning: connect to private/bounce: No such file or directory"))
        << p.log.text();
    EXPECT_TRUE(p.q.exists("deferred", "A1"));
    EXPECT_TRUE(p.q.exists("bounce", "A1")); // for the next attempt
}

namespace {
// The record sendmail -v leaves: report every delivery to the sender.
std::string trace_record() {
    return queuefile::encode_record('A',
                                    "trace_flags=" + std::to_string(protocol::del_flag::record));
}
} // namespace

TEST(MessageEnd, ATraceRequestGoesToTheTraceServiceOnce) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server trace(p.io, "private/trace", status_service(0, &seen));
    Message* m = claimed(p, "A1", 10, trace_record());
    ASSERT_TRUE(m);
    EXPECT_FALSE(p.end.finish_now(*m));
    m->flags |= message_flag::defer; // a recipient left: the file stays
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_EQ(seen, std::vector<std::string>{
                        request(protocol::bounce_cmd::trace, protocol::del_flag::record)});
    ASSERT_TRUE(p.q.exists("deferred", "A1"));
    // Reported: the request is killed in the file, so the next attempt
    // does not report the same deliveries again.
    int fd = ::open(p.q.store.path("deferred", "A1").c_str(), O_RDONLY);
    queuefile::Envelope env;
    ASSERT_TRUE(queuefile::read_envelope(fd, env, 10).ok);
    ::close(fd);
    EXPECT_EQ(env.tflags, 0);
}

TEST(MessageEnd, AFailedTraceDefersTheMessageWithoutItsRecordLost) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server trace(p.io, "private/trace", status_service(1, &seen));
    Message* m = claimed(p, "A1", 10, trace_record());
    ASSERT_TRUE(m);
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_EQ(seen.size(), 1u);
    EXPECT_TRUE(p.log.has("A1: status=deferred (trace failed)")) << p.log.text();
    ASSERT_TRUE(p.q.exists("deferred", "A1"));
    // The request stays in the file, for the next attempt.
    int fd = ::open(p.q.store.path("deferred", "A1").c_str(), O_RDONLY);
    queuefile::Envelope env;
    ASSERT_TRUE(queuefile::read_envelope(fd, env, 10).ok);
    ::close(fd);
    EXPECT_EQ(env.tflags, protocol::del_flag::record);
}

TEST(MessageEnd, ExpiredIsReturnedToTheSender) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server defer(p.io, "private/defer", status_service(0, &seen));
    auto m = claimed(p, "A1", p.params.maximal_queue_lifetime + 1);
    ASSERT_TRUE(m);
    m->flags |= message_flag::defer;
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_TRUE(p.log.has("A1: from=<s@example.org>, status=expired, returned to sender"))
        << p.log.text();
    EXPECT_EQ(seen, std::vector<std::string>{
                        request(protocol::bounce_cmd::flush, protocol::bounce_flag::delrcpt)});
    EXPECT_EQ(p.counters.messages_expired, 1u);
    // Returned: nothing is left to retry.
    EXPECT_FALSE(p.q.exists("deferred", "A1"));
    EXPECT_TRUE(p.log.has("A1: removed"));
}

TEST(MessageEnd, ForceExpiredWhoseNoticeFailedIsDeferred) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server defer(p.io, "private/defer", status_service(1, &seen));
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    m->force_expire = true; // postsuper -e
    m->flags |= message_flag::defer;
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_TRUE(p.log.has("A1: from=<s@example.org>, status=force-expired, returned to sender"))
        << p.log.text();
    EXPECT_EQ(seen.size(), 1u);
    // Named after the request (a flush), as stock's abounce names it.
    EXPECT_TRUE(p.log.has("A1: status=deferred (bounce failed)")) << p.log.text();
    EXPECT_TRUE(p.q.exists("deferred", "A1"));
}

TEST(MessageEnd, DueDelayWarningIsSentAndClearedInTheFile) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server defer(p.io, "private/defer", status_service(0, &seen));
    auto m =
        claimed(p, "A1", 5000, queuefile::encode_record('W', qftest::num15(p.clock.now() - 10)));
    ASSERT_TRUE(m);
    ASSERT_GT(m->env.warn_offset, 0);
    m->flags |= message_flag::defer;
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_EQ(seen, std::vector<std::string>{request(protocol::bounce_cmd::warn, 0)});
    EXPECT_EQ(m->env.warn_time, 0);
    ASSERT_TRUE(p.q.exists("deferred", "A1"));
    // The warning time in the file says "sent" (-1): no second warning,
    // and confirm_delay_cleared knows to confirm the delivery.
    int fd = ::open(p.q.store.path("deferred", "A1").c_str(), O_RDONLY);
    queuefile::Envelope env;
    ASSERT_TRUE(queuefile::read_envelope(fd, env, 10).ok);
    ::close(fd);
    EXPECT_EQ(env.warn_time, -1);
}

TEST(MessageEnd, DelayWarningNotYetDueIsNotSent) {
    Parts p;
    std::vector<std::string> seen;
    fake::Server defer(p.io, "private/defer", status_service(0, &seen));
    auto m =
        claimed(p, "A1", 5000, queuefile::encode_record('W', qftest::num15(p.clock.now() + 100)));
    ASSERT_TRUE(m);
    m->flags |= message_flag::defer;
    finish(p, *m);
    EXPECT_TRUE(seen.empty());
    EXPECT_TRUE(p.q.exists("deferred", "A1"));
}

TEST(MessageEnd, AFileAnAgentFoundCorruptIsQuarantined) {
    Parts p;
    auto m = claimed(p, "A1", 10);
    ASSERT_TRUE(m);
    m->flags |= message_flag::defer;
    ::chmod("active/A1", 0600); // the agent took the ready bits away
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_TRUE(p.q.exists("corrupt", "A1"));
    EXPECT_TRUE(
        p.log.has("warning: saving corrupt file \"A1\" from queue \"active\" to queue \"corrupt\""))
        << p.log.text();
    EXPECT_EQ(p.counters.messages_quarantined, 1u);
}

TEST(MessageEnd, QuarantineOfAFileGoneIsNoNews) {
    Parts p;
    p.end.quarantine("NOPE");
    EXPECT_FALSE(p.log.has_part("saving corrupt file"));
    EXPECT_EQ(p.counters.messages_quarantined, 1u);
}

namespace {
// Reads two recipients at a time.
const char* small_batches = "qmgr_message_recipient_limit = 2\n"
                            "qmgr_message_recipient_minimum = 2\n"
                            "qmgr_message_active_limit = 2";
} // namespace

TEST(MessageEnd, RecipientsLeftInTheFileAreReadNext) {
    Parts p(small_batches);
    auto m = claimed(p, "A1", 10, "", {"a@x.example", "b@x.example", "c@x.example"});
    ASSERT_TRUE(m);
    ASSERT_NE(m->env.rcpt_offset, 0);
    EXPECT_EQ(m->env.recipients.size(), 2u);
    m->env.recipients.clear(); // delivered
    EXPECT_FALSE(p.end.finish_now(*m));
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::more);
    ASSERT_EQ(m->env.recipients.size(), 1u);
    EXPECT_EQ(m->env.recipients[0].address(), "c@x.example");
    EXPECT_TRUE(p.q.exists("active", "A1"));
}

TEST(MessageEnd, RecipientsLeftInAFileThatCannotBeOpenedNowAreReadAfterABackoff) {
    SKIP_UNLESS_DESCRIPTORS_MAY_RUN_OUT();
    Parts p(small_batches);
    Message* m = claimed(p, "A1", 10, "", {"a@x.example", "b@x.example", "c@x.example"});
    ASSERT_TRUE(m);
    m->env.recipients.clear();
    std::optional<MessageEnd::Outcome> outcome;
    auto limit = std::make_unique<NoMoreDescriptors>();
    asio::co_spawn(p.io, p.end.finish(*m),
                   [&](std::exception_ptr, MessageEnd::Outcome o) { outcome = o; });
    run_until(p.io, [&] { return p.log.has("warning: open active A1: Too many open files"); });
    EXPECT_FALSE(outcome);
    limit.reset(); // descriptors again: the next try reads the batch
    run_until(p.io, [&] { return outcome.has_value(); });
    EXPECT_EQ(outcome, MessageEnd::Outcome::more);
    EXPECT_EQ(m->env.recipients.size(), 1u);
    EXPECT_TRUE(p.q.exists("active", "A1"));
}

TEST(MessageEnd, RecipientsLeftInADamagedFileEndInCorrupt) {
    Parts p(small_batches);
    auto m = claimed(p, "A1", 10, "", {"a@x.example", "b@x.example", "c@x.example"});
    ASSERT_TRUE(m);
    ASSERT_NE(m->env.rcpt_offset, 0);
    // The rest of the file is gone: truncated after the first batch.
    ASSERT_EQ(::truncate("active/A1", m->env.rcpt_offset + 3), 0);
    p.log.clear();
    EXPECT_EQ(finish(p, *m), MessageEnd::Outcome::over);
    EXPECT_TRUE(p.q.exists("corrupt", "A1")) << p.log.text();
    EXPECT_EQ(
        p.log.lines(),
        (std::vector<std::string>{
            "warning: A1: rcpt count mismatch (1)",
            "warning: active/A1: unexpected EOF in data, record type 82 length 11",
            "warning: A1: message rejected: missing end record",
            "warning: saving corrupt file \"A1\" from queue \"active\" to queue \"corrupt\""}));
}
