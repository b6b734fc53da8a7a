#include "paced_injection.hpp"

#include "clock.hpp"
#include "delivery_watch.hpp"
#include "mail_setup.hpp"

#include <cstdlib>

namespace bench {

bool PacedInjection::step() {
    double now = boot_seconds();
    if (!client_) {
        started = now;
        client_.emplace(port_, std::chrono::seconds(300));
        client_->ehlo("bench.example");
        client_->pipeline_recipients(500);
        first_(*client_);
        due_ = boot_seconds();
        first_due_ = due_;
        return false;
    }
    if (sent_ < paced_ && now >= due_) {
        next_(*client_, sent_);
        ++sent_;
        due_ += interval_;
    }
    if (sent_ < paced_) return false;
    client_->quit();
    finished = boot_seconds();
    return true;
}

PacedInjection::SendNext one_recipient(std::string sender, std::string prefix, std::string domain) {
    return [sender, prefix, domain](compat::SmtpClient& c, std::uint64_t i) {
        c.send_mail(sender, {prefix + std::to_string(i) + "@" + domain},
                    short_message(sender, prefix));
    };
}

std::vector<double> submission_to_delivery(const PacedInjection& inj, const DeliveryWatch& w,
                                           const std::string& prefix) {
    std::vector<double> out;
    const auto& to = w.tagged_recipients();
    const auto& seen = w.tagged_seen_at();
    for (std::size_t k = 0; k < to.size(); ++k) {
        if (to[k].rfind(prefix, 0) != 0) continue;
        char* end = nullptr;
        unsigned long long i = std::strtoull(to[k].c_str() + prefix.size(), &end, 10);
        if (end == to[k].c_str() + prefix.size() || *end != '@') continue;
        double due = inj.scheduled(i);
        if (due > 0) out.push_back(seen[k] - due);
    }
    return out;
}

} // namespace bench
