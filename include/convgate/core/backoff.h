// The one backoff formula of convgate's retries (a conversion, a hub request, a batch job): each
// keeps its own rule for what is worth retrying and its own base and ceiling, not its own formula.
#pragma once

namespace convgate {

// The wait before retry number `retry` (0: the first retry): base_seconds x 2^retry, at most
// max_seconds, then scaled by `jitter` in [0, 1] (the hub's full jitter draws it; 1 for none).
// Never negative; a negative `retry` counts as 0.
double ExponentialBackoff(double base_seconds, double max_seconds, int retry, double jitter = 1.0);

}  // namespace convgate
