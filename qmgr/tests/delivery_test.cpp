// Delivery against a fake agent on a private/<transport> socket in a
// scratch directory (no root, no Postfix): what the observers hear of each
// delivery, in which order and in which one shape, and what the scheduler
// is told, for a delivered entry, a deferral with a hop status, an agent
// that hangs up without a reply, an agent that sends garbage, and a
// transport with no agent at all.
#include "cqmgr/test/temp_dir.hpp"
#include "delivery.hpp"
#include "fake_driver.hpp"
#include "fake_server.hpp"
#include "message.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace cqmgr::qmgr {
namespace {

using namespace std::string_literals;
using fake::Socket;

const std::string hello = "protocol\0delivery_request_protocol\0\0"s;

// A reply list: the seven DSN attributes (hop status `status` and
// `reason`), then the agent's status.
std::string reply(const std::string& status, const std::string& reason, int agent_status) {
    return "status\0"s + status + "\0diag_type\0\0diag_text\0\0mta_type\0\0mta_mname\0\0"s +
           "action\0\0reason\0"s + reason + "\0status\0"s + std::to_string(agent_status) + "\0\0"s;
}

// What the agent does once it has the request.
enum class Agent { reply, hang_up, garbage };

// An agent that announces itself, reads the request and its recipient,
// then answers as `how` says (with `bytes` for a reply).
fake::Server::Script agent(Agent how, std::string bytes = {}) {
    return [=](Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, hello)) co_return;
        fake::ListReader r;
        protocol::AttrList list;
        if (!co_await r.read(s, list)) co_return; // the request
        if (!co_await r.read(s, list)) co_return; // its one recipient
        if (how == Agent::hang_up) {
            s.close();
            co_return;
        }
        // Made before the co_await: GCC 12 destroys a conditional's
        // temporary there twice.
        std::string out = how == Agent::garbage ? "\x01\x02junk\0"s : bytes;
        if (!co_await fake::send(s, out)) co_return;
        while (co_await r.read(s, list)) {
        }
    };
}

// Writes down every event, and what each delivery event carried.
struct Recorder : DeliveryObserver {
    std::vector<std::string> events;
    std::vector<DeliveryEvent> ends;
    bool set_unseen = false;

    void delivery_started(DeliveryEvent& ev) override {
        events.push_back("started " + ev.entry->message->id + " " + ev.entry->queue->name +
                         " busy " + std::to_string(ev.busy_at_start));
    }
    void delivery_ended(DeliveryEvent& ev) override {
        events.push_back("ended");
        if (set_unseen) ev.result.unseen = true;
        ends.push_back(ev);
    }
    void delivery_reported(const DeliveryEvent& ev) override {
        events.push_back(ev.entry ? "reported with entry" : "reported");
    }
    void message_ended(const Message& m) override { events.push_back("message ended " + m.id); }
};

struct DeliveryTest : ::testing::Test {
    test::TempDir dir{"cqmgr-delivery"};
    std::string old_cwd = std::filesystem::current_path().string();
    asio::io_context io;
    conf::QmgrParams params = testing::params("");
    SystemClock clock;
    core::test::FakeDriver drv;
    core::TransportConfig tc;
    core::Scheduler sched{core::SchedulerConfig{}, [this](const std::string&) { return tc; }, drv};
    Recorder rec;
    DeliveryObservers observers;
    Delivery delivery{io, params, clock, sched, observers};
    std::unique_ptr<fake::Server> server;
    std::vector<std::unique_ptr<Message>> msgs;

    void SetUp() override {
        // Delivery reaches its agents as private/<transport>, from the
        // queue directory: this one.
        std::filesystem::create_directory(dir.file("private"));
        std::filesystem::current_path(dir.path());
        drv.sched = &sched;
        drv.free_on_done = false;
        tc.dest_recipient_limit = 1;
        sched.set_time(clock.now());
        observers.add(&rec);
        observers.add(&delivery);
    }
    void TearDown() override { std::filesystem::current_path(old_cwd); }

    // Starts the fake agent of smtp.
    void serve(fake::Server::Script script) {
        server = std::make_unique<fake::Server>(io, dir.file("private/smtp"), std::move(script));
    }
    // Message `id` with one recipient for d.example on smtp.
    Message& message(const std::string& id) {
        auto m = std::make_unique<Message>();
        m->id = id;
        m->phase = Message::Phase::waiting;
        m->env.text.set(queuefile::EnvelopeText::sender, "s@example.org");
        sched.message_add(*m);
        core::Transport& t = sched.transport("smtp");
        sched.assign(*m, sched.queue_for(t, "d.example", "d.example"),
                     core::test::rcpt("r@d.example"));
        sched.batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        return *msgs.back();
    }
    // Runs the loop until `done` holds (at most 10 s).
    void run_until(const std::function<bool()>& done) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            if (io.stopped()) io.restart();
            io.run_one_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(done()) << "timed out";
    }
    // Message "A" goes to an agent running `script`; the event its
    // delivery ended with, once reported.
    const DeliveryEvent& deliver_one(fake::Server::Script script) {
        serve(std::move(script));
        message("A");
        delivery.pump();
        run_until([&] { return reported(); });
        EXPECT_EQ(rec.ends.size(), 1u);
        static const DeliveryEvent none;
        return rec.ends.empty() ? none : rec.ends[0];
    }
    bool reported() const {
        return !rec.events.empty() && rec.events.back().rfind("reported", 0) == 0;
    }
};

} // namespace

TEST_F(DeliveryTest, ADeliveredEntryIsStartedEndedAndReportedInOrder) {
    serve(agent(Agent::reply, reply("2.0.0", "", 0)));
    message("A");
    delivery.pump();
    run_until([&] { return reported(); });
    EXPECT_EQ(rec.events,
              (std::vector<std::string>{"started A d.example busy 1", "ended", "reported"}));
    ASSERT_EQ(rec.ends.size(), 1u);
    const DeliveryEvent& ev = rec.ends[0];
    EXPECT_EQ(ev.result.kind, core::DeliveryResult::Kind::replied);
    EXPECT_EQ(ev.result.status, 0);
    EXPECT_EQ(ev.hop().status, "2.0.0");
    EXPECT_EQ(ev.probe_status(), 0);
    EXPECT_GE(ev.elapsed_us, 0);
    EXPECT_EQ(ev.clock, &clock);
    // The scheduler has the outcome: the entry is done, and so the message.
    EXPECT_EQ(drv.done, std::vector<std::string>{"A"});
    EXPECT_EQ(msgs[0]->flags, 0);
    EXPECT_TRUE(delivery.record().in_flight().empty());
    sched.check_invariants();
}

TEST_F(DeliveryTest, ADeferralCarriesTheHopStatusToObserversAndScheduler) {
    const DeliveryEvent& ev =
        deliver_one(agent(Agent::reply, reply("4.4.1", "connect to d.example: refused", 1)));
    EXPECT_EQ(ev.result.status, 1);
    EXPECT_EQ(ev.hop().status, "4.4.1");
    EXPECT_EQ(ev.hop().reason, "connect to d.example: refused");
    EXPECT_EQ(ev.probe_status(), 1);
    // The message is to be retried.
    EXPECT_EQ(msgs[0]->flags, message_flag::defer);
    EXPECT_EQ(drv.done, std::vector<std::string>{"A"});
}

TEST_F(DeliveryTest, AnAgentThatHangsUpIsACrashWithoutAHopStatus) {
    const DeliveryEvent& ev = deliver_one(agent(Agent::hang_up));
    EXPECT_EQ(ev.result.kind, core::DeliveryResult::Kind::crashed);
    // The core is given stock's verdict, the observers no hop status.
    EXPECT_TRUE(ev.hop().status.empty());
    EXPECT_EQ(ev.probe_status(), -1);
    EXPECT_EQ(msgs[0]->flags, message_flag::defer);
    EXPECT_EQ(drv.done, std::vector<std::string>{"A"});
}

TEST_F(DeliveryTest, AnAgentThatSendsGarbageIsACrash) {
    const DeliveryEvent& ev = deliver_one(agent(Agent::garbage));
    EXPECT_EQ(ev.result.kind, core::DeliveryResult::Kind::crashed);
    EXPECT_EQ(msgs[0]->flags, message_flag::defer);
}

TEST_F(DeliveryTest, NoAgentKillsTheTransportAndNoDeliveryStarts) {
    // Nobody listens on private/smtp: the connection fails at once.
    message("A");
    delivery.pump();
    run_until([&] { return sched.transports().at("smtp")->dead; });
    EXPECT_TRUE(rec.events.empty());
    EXPECT_TRUE(delivery.record().in_flight().empty());
}

TEST_F(DeliveryTest, AnObserversVerdictReachesTheScheduler) {
    // The adaptive limits mark a delivery no receiver saw (unseen) in
    // delivery_ended(); the scheduler is given the event's result, not a
    // copy made before.
    rec.set_unseen = true;
    const DeliveryEvent& ev = deliver_one(agent(Agent::reply, reply("", "", 1)));
    EXPECT_TRUE(ev.result.unseen);
}

TEST_F(DeliveryTest, AMessagesEndReachesTheObservers) {
    Message& m = message("A");
    observers.message_ended(m);
    EXPECT_EQ(rec.events, std::vector<std::string>{"message ended A"});
}

} // namespace cqmgr::qmgr
