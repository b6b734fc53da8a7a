#include "soak_injector.hpp"

#include "clock.hpp"
#include "error.hpp"
#include "smtp_client.hpp"
#include "soak_traffic.hpp"

#include <chrono>
#include <fstream>
#include <memory>
#include <vector>

namespace bench {

SoakInjector::SoakInjector(std::uint16_t smtpd_port, double start, double rate,
                           std::string log_path)
    : port_(smtpd_port), start_(start), rate_(rate), log_path_(std::move(log_path)) {
    thread_ = std::thread([this] { loop(); });
}

SoakInjector::~SoakInjector() {
    stop();
}

void SoakInjector::stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
}

std::set<std::uint64_t> SoakInjector::failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_;
}

std::set<std::uint64_t> SoakInjector::retried() const {
    std::lock_guard<std::mutex> lock(mu_);
    return retried_;
}

// Appends a line to the injection log (failures only: a healthy run writes
// nothing).
void SoakInjector::note(const std::string& line) {
    std::ofstream(log_path_, std::ios::app) << line << "\n";
}

// One session, opened again after any failure; a message gets three tries,
// a second apart. Sleeps in short steps so that stop() is prompt.
void SoakInjector::loop() {
    std::unique_ptr<compat::SmtpClient> client;
    for (std::uint64_t n = 0; !stop_; ++n) {
        double due = start_ + static_cast<double>(n) / rate_;
        while (!stop_ && boot_seconds() < due)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (stop_) break;
        lag_ = boot_seconds() - due;
        SoakMessage m = soak_message(n);
        std::vector<std::string> to;
        for (const auto& r : m.recipients)
            to.push_back(r.address);
        bool sent = false;
        for (int attempt = 0; attempt < 3 && !sent && !stop_; ++attempt) {
            try {
                if (attempt > 0) {
                    std::lock_guard<std::mutex> lock(mu_);
                    retried_.insert(n);
                }
                if (!client) {
                    client = std::make_unique<compat::SmtpClient>(port_, std::chrono::seconds(120));
                    client->ehlo("bench.example");
                    client->pipeline_recipients(50);
                }
                client->send_mail(m.sender, to, m.text);
                sent = true;
            } catch (const compat::Error& e) {
                note("message " + std::to_string(n) + " try " + std::to_string(attempt + 1) + ": " +
                     e.what());
                client.reset();
                std::this_thread::sleep_for(std::chrono::seconds(1));
            }
        }
        if (!sent) {
            std::lock_guard<std::mutex> lock(mu_);
            failed_.insert(n);
        }
        attempted_ = n + 1;
    }
    if (client) {
        try {
            client->quit();
        } catch (const compat::Error&) {
        }
    }
}

} // namespace bench
