// libFuzzer target for the decoder of the control settings that the state
// store keeps (decode_control_settings(), what a store read back from disk,
// or an earlier version's cqmgr-control.json, hands it): any bytes.
// Besides the sanitizers it checks:
//   * a refused document has an error text;
//   * every decoded setting keeps the format's rules (a target; a throttle
//     names a destination and a concurrency of at least 1; no end before
//     the epoch);
//   * encoding the settings and decoding that gives the same settings, and
//     encoding them again gives the same bytes;
//   * nothing longer than the limit is decoded.
#include "cqmgr/state/control_record.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace cqmgr::state;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

void check_setting(const ControlSetting& s) {
    if (s.transport.empty() && s.destination.empty()) finding("setting without target");
    if (s.until < 0) finding("negative end");
    if (s.kind == ControlSetting::Kind::throttle) {
        if (s.destination.empty()) finding("throttle without destination");
        if (s.concurrency < 1) finding("throttle below 1");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto settings = decode_control_settings(text);
    if (!settings) {
        if (settings.error().message().empty()) finding("refused without an error text");
        return 0;
    }
    if (text.size() > max_control_bytes) finding("decoded past the limit");
    for (const ControlSetting& s : *settings)
        check_setting(s);
    std::string doc = encode_control_settings(*settings);
    auto back = decode_control_settings(doc);
    if (!back) finding("encoded settings do not decode");
    if (*back != *settings) finding("encoded settings decode differently");
    if (encode_control_settings(*back) != doc) finding("encoding is not stable");
    return 0;
}
