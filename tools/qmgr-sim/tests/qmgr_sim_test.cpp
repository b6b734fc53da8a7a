// Tests of qmgr-sim: the workload file's keys and value forms, main.cf and
// master.cf read as the daemon reads them, natural order, the
// repository's scenarios (the 421 experiment and preemption), and the
// binary's options, CSV and PNG.
#include "cqmgr/test/temp_dir.hpp"
#include "natural_order.hpp"
#include "postfix_config.hpp"
#include "timeline_csv.hpp"
#include "workload.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>

using namespace cqmgr;
namespace fs = std::filesystem;

namespace {

const std::string scenarios = QMGR_SIM_SCENARIOS;

using cqmgr::test::TempDir;

// Runs a shell command; its exit status and what it printed (both streams).
struct Run {
    int status = -1;
    std::string output;
};
Run run(const std::string& command) {
    Run r;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        r.output.append(buf, n);
    int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

std::string sim_binary() {
    return QMGR_SIM_BINARY;
}

// A workload's outcome with Postfix's configuration from `sources`.
core::SimResult play(sim::Workload& w, const sim::PostfixSources& sources = {}) {
    sim::apply_postfix_config(sources, w, [](const std::string&) {});
    return core::simulate(w.sim, w.hooks.get());
}

double deferred_percent(const core::SimResult& r) {
    return 100.0 * r.deferred / (r.delivered + r.deferred);
}

// The WorkloadError text of a workload, or "" when it is accepted.
std::string workload_error(const std::string& text) {
    try {
        sim::parse_workload(text, "w.toml");
    } catch (const sim::WorkloadError& e) {
        return e.what();
    }
    return "";
}

const std::string one_destination = R"(
[[destination]]
name = "d.example"

[[message]]
id = "M"
recipients = { "d.example" = 1 }
)";

} // namespace

TEST(NaturalOrder, DigitRunsCompareAsNumbers) {
    std::vector<std::string> ids = {"small#10", "small#2", "LIST", "small#1",
                                    "small#20", "small#3", "big",  "small#02"};
    std::sort(ids.begin(), ids.end(), sim::natural_less);
    std::vector<std::string> want = {"LIST",    "big",     "small#1",  "small#02",
                                     "small#2", "small#3", "small#10", "small#20"};
    EXPECT_EQ(ids, want);
    EXPECT_FALSE(sim::natural_less("a", "a"));
    EXPECT_TRUE(sim::natural_less("a", "ab"));
    EXPECT_TRUE(sim::natural_less("x9y", "x10"));
    EXPECT_TRUE(sim::natural_less("m99999999999999999999", "m100000000000000000000"));
}

TEST(Workload, UnknownKeysAreErrorsWithFileLineAndKey) {
    EXPECT_EQ(workload_error("end_time = 10\nendtime = 5\n" + one_destination),
              "w.toml:2: unknown key \"endtime\" in the top level");
    EXPECT_EQ(workload_error("[[destination]]\nname = \"d\"\nlatncy = 1\n"),
              "w.toml:3: unknown key \"latncy\" in [[destination]]");
    EXPECT_EQ(workload_error(one_destination + "arival = 3\n"),
              "w.toml:8: unknown key \"arival\" in [[message]]");
    EXPECT_EQ(workload_error("[main_cf]\nsmtp_destination_concurency_limit = 5\n"),
              "w.toml:2: main_cf: unknown parameter smtp_destination_concurency_limit");
    // The old format's tables are refused, not ignored.
    EXPECT_EQ(workload_error("[transport.default]\ndestination_concurrency_limit = 5\n"),
              "w.toml:1: unknown key \"transport\" in the top level");
}

TEST(Workload, AcceptsPostfixTimeForms) {
    auto w = sim::parse_workload(R"(
end_time = "2h"
[[destination]]
name = "d.example"
latency = "5s"
session_setup = 0.25
[[message]]
id = "M"
arrival = "1m"
repeat = 3
every = "2m"
recipients = { "d.example" = 2 }
)",
                                 "w.toml");
    EXPECT_EQ(w.sim.end_time, 7200);
    EXPECT_EQ(w.sim.destinations.at(0).latency_per_rcpt, 5);
    EXPECT_EQ(w.sim.destinations.at(0).session_setup, 0.25);
    ASSERT_EQ(w.sim.messages.size(), 3u);
    EXPECT_EQ(w.sim.messages[2].id, "M#3");
    EXPECT_EQ(w.sim.messages[2].arrival, 300);
    EXPECT_NE(workload_error("end_time = \"5 s\"\n"), "");
    EXPECT_NE(workload_error("end_time = \"5x\"\n"), "");
    EXPECT_NE(workload_error("end_time = -1\n"), "");
}

TEST(Workload, OtherMistakesNameTheLine) {
    EXPECT_EQ(workload_error("[[destination]]\nname = \"d\"\n[[message]]\nrecipients = { "
                             "\"e\" = 1 }\n"),
              "w.toml:3: message M: unknown destination e");
    EXPECT_EQ(workload_error(one_destination + "lane = \"fast\"\n"),
              "w.toml:8: lane: expected \"urgent\", \"normal\" or \"bulk\"");
    EXPECT_EQ(workload_error("[[destination]]\nname = \"d\"\nserver_limit = \"5\"\n"),
              "w.toml:3: server_limit: expected a whole number of at least 0");
}

TEST(PostfixConfig, DefaultsAreStocks) {
    auto w = sim::parse_workload(one_destination, "w.toml");
    play(w);
    const auto& smtp = w.sim.transports.at("smtp");
    EXPECT_EQ(smtp.dest_concurrency_limit, 20);
    EXPECT_EQ(smtp.init_dest_concurrency, 5);
    EXPECT_EQ(smtp.dest_recipient_limit, 50);
    EXPECT_EQ(w.sim.scheduler.minimal_backoff_time, 300);
    EXPECT_EQ(w.sim.process_limits.at("smtp"), 100); // default_process_limit
}

TEST(PostfixConfig, MainCfAndMasterCfChangeTheSimulatedLimits) {
    TempDir dir("qmgr-sim-test");
    dir.write("main.cf", "# as an admin would have it\n"
                         "my_limit = 5\n"
                         "smtp_destination_concurrency_limit = $my_limit\n"
                         "smtp_destination_rate_delay = 0\n"
                         "minimal_backoff_time = 5m\n");
    dir.write("master.cf", "smtp      unix  -       -       n       -       7       smtp\n"
                           "relay     unix  -       -       n       -       -       smtp\n");
    // A list to a.example stops at its window limit (5); when more mail
    // comes for b and c, all three together stop at smtp's 7 agents.
    auto w = sim::parse_workload(R"(
[[destination]]
name = "a.example"
[[destination]]
name = "b.example"
[[destination]]
name = "c.example"
[[message]]
id = "A"
recipients = { "a.example" = 400 }
[[message]]
id = "BC"
arrival = "10s"
recipients = { "b.example" = 200, "c.example" = 200 }
)",
                                 "w.toml");
    sim::PostfixSources src;
    src.config_dir = dir.str();
    auto r = play(w, src);
    EXPECT_EQ(w.sim.transports.at("smtp").dest_concurrency_limit, 5);
    EXPECT_EQ(w.sim.scheduler.minimal_backoff_time, 300);
    EXPECT_EQ(w.sim.process_limits.at("smtp"), 7);
    EXPECT_EQ(r.max_busy_agents.at("smtp"), 7);
    EXPECT_EQ(r.delivered, 800);
    int most = 0;
    for (const auto& [name, d] : r.destinations) {
        EXPECT_LE(d.max_concurrency, 5) << name;
        most = std::max(most, d.max_concurrency);
    }
    EXPECT_EQ(most, 5);
    for (const auto& s : r.samples)
        for (const auto& [t, a] : s.transports)
            EXPECT_LE(a.busy, 7) << "at " << s.time;

    // The same through --main-cf / --master-cf, and -o over main.cf.
    auto w2 = sim::parse_workload(one_destination, "w.toml");
    sim::PostfixSources files;
    files.main_cf = dir.file("main.cf");
    files.master_cf = dir.file("master.cf");
    files.overrides = {{"my_limit", "3"}};
    play(w2, files);
    EXPECT_EQ(w2.sim.transports.at("smtp").dest_concurrency_limit, 3);
    EXPECT_EQ(w2.sim.process_limits.at("smtp"), 7);
}

TEST(PostfixConfig, RefusesWhatTheDaemonRefuses) {
    TempDir dir("qmgr-sim-test");
    dir.write("main.cf", "smtp_destination_concurrency_limit = lots\n");
    dir.write("master.cf", "smtp unix - - n - 7 smtp\n");
    auto w = sim::parse_workload(one_destination, "w.toml");
    sim::PostfixSources src;
    src.config_dir = dir.str();
    EXPECT_THROW(play(w, src), sim::ConfigProblem);
    // The workload's main_cf, named by its line in the workload file.
    auto bad = sim::parse_workload("end_time = 9\n[main_cf]\ninitial_destination_concurrency = "
                                   "\"many\"\n" +
                                       one_destination,
                                   "w.toml");
    try {
        play(bad);
        ADD_FAILURE() << "accepted";
    } catch (const sim::ConfigProblem& e) {
        EXPECT_EQ(std::string(e.what()).find("w.toml, line 3"), 0u) << e.what();
    }
    // A transport without a master.cf service.
    dir.write("main.cf", "\n");
    dir.write("master.cf", "relay unix - - n - 7 smtp\n");
    auto w2 = sim::parse_workload(one_destination, "w.toml");
    try {
        play(w2, src);
        ADD_FAILURE() << "accepted";
    } catch (const sim::ConfigProblem& e) {
        EXPECT_NE(std::string(e.what()).find("no unix service smtp"), std::string::npos);
    }
}

TEST(Scenarios, The421ExperimentDefersAboutOneSixthWithPerConcurrencyFeedback) {
    auto w = sim::read_workload(scenarios + "/limited-server.toml");
    auto r = play(w);
    EXPECT_EQ(r.delivered + r.deferred, 2000);
    EXPECT_NEAR(deferred_percent(r), 16.5, 3.0);
    const auto& d = r.destinations.at("limited.example");
    EXPECT_LE(d.max_concurrency, 5);
    EXPECT_NEAR(d.concurrency_mean, 5.0, 0.5);
}

TEST(Scenarios, The421ExperimentWithConstantFeedback) {
    sim::PostfixSources src;
    src.overrides = {{"default_destination_concurrency_positive_feedback", "1"},
                     {"default_destination_concurrency_negative_feedback", "1"}};
    // Postfix 3.7's arithmetic: about a third deferred.
    auto w = sim::read_workload(scenarios + "/limited-server.toml");
    EXPECT_NEAR(deferred_percent(play(w, src)), 33.3, 3.0);
    // The published pseudocode's: about a half (49.7 % measured).
    auto readme = sim::read_workload(scenarios + "/limited-server.toml");
    readme.readme_arithmetic = true;
    EXPECT_NEAR(deferred_percent(play(readme, src)), 49.7, 3.0);
    // 1/sqrt_concurrency, which only the simulator takes: about a quarter.
    sim::PostfixSources sqrt;
    sqrt.overrides = {{"default_destination_concurrency_positive_feedback", "1/sqrt_concurrency"},
                      {"default_destination_concurrency_negative_feedback", "1/sqrt_concurrency"}};
    auto s = sim::read_workload(scenarios + "/limited-server.toml");
    s.readme_arithmetic = true;
    EXPECT_NEAR(deferred_percent(play(s, sqrt)), 24.5, 3.0);
}

TEST(Scenarios, PreemptionLetsTheSmallMessagesPassTheList) {
    auto w = sim::read_workload(scenarios + "/bulk-and-small.toml");
    auto r = play(w);
    EXPECT_EQ(r.delivered, 2020);
    double list_done = r.message_done.at("LIST");
    int small = 0;
    for (const auto& m : w.sim.messages) {
        if (m.id == "LIST") continue;
        ++small;
        double done = r.message_done.at(m.id);
        EXPECT_LT(done, list_done) << m.id;
        // Without preemption each would wait for the whole list (about
        // 200 s); with it, for the slots the list has earned.
        EXPECT_LT(done - m.arrival, 40) << m.id;
    }
    EXPECT_EQ(small, 20);
}

TEST(Scenarios, UrgentMessagesPassTheCampaign) {
    auto w = sim::read_workload(scenarios + "/urgent-amid-bulk.toml");
    auto r = play(w);
    EXPECT_EQ(w.sim.process_limits.at("smtp"), 100);
    double campaign_done = 0;
    for (const auto& m : w.sim.messages)
        if (m.id.rfind("bulk", 0) == 0)
            campaign_done = std::max(campaign_done, r.message_done.at(m.id));
    // Each urgent message goes out as it arrives (one 0.5 s delivery),
    // however much of the campaign is still waiting.
    int during = 0;
    for (const auto& m : w.sim.messages)
        if (m.id.rfind("urgent", 0) == 0) {
            EXPECT_LE(r.message_done.at(m.id) - m.arrival, 1.0) << m.id;
            during += m.arrival < campaign_done - 10;
        }
    EXPECT_GE(during, 5);
}

TEST(Binary, HelpExitsZero) {
    auto r = run(sim_binary() + " --help");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("--csv"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--plot"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--config-dir"), std::string::npos) << r.output;
    // Mistakes on the command line: status 2, as any other mistake.
    EXPECT_EQ(run(sim_binary() + " --no-such-option x.toml").status, 2);
    EXPECT_EQ(run(sim_binary()).status, 2);
    EXPECT_EQ(run(sim_binary() + " -o nonsense " + scenarios + "/bulk-and-small.toml").status, 2);
}

TEST(Binary, UnknownKeyIsAnError) {
    TempDir dir("qmgr-sim-test");
    auto path = dir.write("w.toml", "end_time = 5\nsampel_every = 1\n");
    auto r = run(sim_binary() + " " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.output.find(path + ":2: unknown key \"sampel_every\""), std::string::npos)
        << r.output;
}

TEST(Binary, ListsMessagesInNaturalOrderWithTheirDelay) {
    auto r = run(sim_binary() + " " + scenarios + "/bulk-and-small.toml");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("delay"), std::string::npos);
    auto p2 = r.output.find("\nsmall#2 "), p10 = r.output.find("\nsmall#10 ");
    ASSERT_NE(p2, std::string::npos) << r.output;
    ASSERT_NE(p10, std::string::npos) << r.output;
    EXPECT_LT(p2, p10);
    // small#1 arrives at 5 s: its row is "small#1  5.0  DONE  DELAY".
    std::istringstream row(r.output.substr(r.output.find("\nsmall#1 ") + 1));
    std::string id;
    double arrival = 0, done = 0, delay = 0;
    row >> id >> arrival >> done >> delay;
    EXPECT_EQ(arrival, 5.0);
    EXPECT_NEAR(delay, done - arrival, 0.11);
}

TEST(Binary, WritesAWellFormedCsv) {
    TempDir dir("qmgr-sim-test");
    std::string csv = dir.file("t.csv");
    auto r = run(sim_binary() + " --csv " + csv + " " + scenarios + "/limited-server.toml");
    ASSERT_EQ(r.status, 0) << r.output;
    std::ifstream in(csv);
    std::string header;
    ASSERT_TRUE(std::getline(in, header));
    EXPECT_EQ(header, "time,delivered,deferred,messages_done,agents:smtp,waiting:smtp,"
                      "window:limited.example,sessions:limited.example,"
                      "delivered:limited.example,deferred:limited.example");
    size_t fields = std::count(header.begin(), header.end(), ',') + 1;
    double last_time = -1;
    int rows = 0, delivered = 0, deferred = 0, max_window = 0;
    for (std::string line; std::getline(in, line); ++rows) {
        ASSERT_EQ(std::count(line.begin(), line.end(), ',') + 1, static_cast<long>(fields)) << line;
        std::vector<std::string> f;
        std::istringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');)
            f.push_back(x);
        double t = std::stod(f[0]);
        EXPECT_GT(t, last_time);
        last_time = t;
        delivered = std::stoi(f[1]);
        deferred = std::stoi(f[2]);
        if (f.size() > 6 && !f[6].empty()) max_window = std::max(max_window, std::stoi(f[6]));
        EXPECT_LE(std::stoi(f[7]), 5) << line; // sessions: the server takes 5
    }
    EXPECT_GT(rows, 100);
    EXPECT_EQ(delivered + deferred, 2000); // the last row is the end
    EXPECT_GE(max_window, 5);
}

TEST(Binary, DrawsAPng) {
    if (run("command -v gnuplot").status != 0) GTEST_SKIP() << "gnuplot is not installed";
    TempDir dir("qmgr-sim-test");
    std::string png = dir.file("t.png");
    auto r = run(sim_binary() + " --plot " + png + " " + scenarios + "/bulk-and-small.toml");
    ASSERT_EQ(r.status, 0) << r.output;
    std::ifstream in(png, std::ios::binary);
    char magic[8] = {};
    in.read(magic, 8);
    EXPECT_EQ(std::string(magic, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_GT(fs::file_size(png), 10000u);
}

TEST(Binary, PlotWithoutGnuplotSaysSo) {
    TempDir dir("qmgr-sim-test");
    std::string png = dir.file("t.png");
    auto r = run("PATH=" + dir.str() + " " + sim_binary() + " --plot " + png + " " + scenarios +
                 "/bulk-and-small.toml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.output.find("--plot needs gnuplot"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(png));
}
