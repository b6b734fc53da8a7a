// Where Providers learns a destination's provider by its MX hosts: an
// asynchronous lookup of the domain's MX set, matched against
// cqmgr_provider_maps by host name and parent suffix (every MX host must
// match one provider).  Providers asks once per destination queue it
// creates and never waits for the answer: the destination starts on its
// own and joins its provider when (if) the answer comes.
#pragma once

#include <functional>
#include <string>

namespace cqmgr::qmgr {

class MxSource {
  public:
    // The provider that `domain`'s MX hosts all belong to, or "" for none
    // (no MX, hosts of several providers or of none, a failed or timed-out
    // lookup).  May answer at once (from a cache) or later on the event
    // loop; answers at most once per call.
    using Answer = std::function<void(const std::string& provider)>;

    virtual ~MxSource() = default;
    virtual void lookup(const std::string& domain, Answer answer) = 0;
};

} // namespace cqmgr::qmgr
