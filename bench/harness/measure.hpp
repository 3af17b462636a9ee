// How every ceiling is timed: CUDA events around a region queued behind a blocking kernel (so
// launch and queueing cost stay out), a warm-up, then samples until the cv converges, the sample
// cap, or the time budget; telemetry polled throughout. Plus device buffers and counter reporting.
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ceilings/stats.hpp"
#include "check.hpp"
#include "registry.hpp"
#include "telemetry.hpp"

namespace ceilings::bench {

// Owning device allocation; an allocation the device cannot satisfy throws a CheckError that
// says how much was asked and how much was free.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // No allocation for count 0 (cudaMalloc of 0 bytes is not documented to succeed): get() is null.
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count) ptr_ = static_cast<T*>(allocate(count * sizeof(T)));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr; o.count_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  static void* allocate(std::size_t bytes);
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

void* device_allocate(std::size_t bytes);
template <class T>
void* DeviceBuffer<T>::allocate(std::size_t bytes) {
  return device_allocate(bytes);
}

// Re-poisons a sample of an output buffer: one 16-byte vector in every kPoisonStride bytes, and the last one.
// Meant for MeasureSpec::before_sample (outside the timed region; microseconds even for GiBs): the unblocked
// first unit and the warm-up have long since written the right output, so without it the check after a run
// could not tell whether the last sample's own units wrote anything. It shows they reached across the buffer (every
// 64 KiB and 16 bytes) to its end, not every byte (earlier samples wrote the rest as well). The stride is an odd number of vectors
// (4097): a power of two would poison the same position of every power-of-two chunk or tile, and so only the
// blocks those chunks go to (every fourth of 132 for the TMA's 16 KiB chunks); this one drifts a vector a
// stride through every position, and so every block's share of a large buffer. `device` is on the stream's
// device; `host` is host memory no pending copy still writes.
constexpr std::size_t kPoisonStride = 4097 * 16;
void poison_stride_device(void* device, std::size_t bytes, int value, cudaStream_t stream);
void poison_stride_host(void* host, std::size_t bytes, int value);

// RAII stream.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void sync() const;

 private:
  cudaStream_t stream_ = nullptr;
};

// RAII event (timing on unless `flags` turns it off): destroyed on every path, a throwing check after it included
// (review 105: a pair of raw events leaked the first where the second's creation threw).
class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};
// Seconds between two events recorded and done.
double elapsed_seconds(const Event& from, const Event& to);

// A kernel that spins on a host-mapped flag: work queued behind it starts back to back once the
// host releases it, so the first launch's latency is not inside the timed region (nvbandwidth's
// method). It gives up after a timeout so a host that never releases cannot hang the GPU.
// Sharp edges (nvbench's blocking_kernel documents the same): nothing queued behind it may need the
// GPU to make progress before the host returns — a kernel's first launch under lazy module loading
// (CUDA 12.2+ default) may synchronise the context, a full launch queue blocks the host, and any
// synchronising call (cudaMalloc, cudaFree, a pageable cudaMemcpy) waits for the spinner. Each
// of those costs the timeout and fails the sample; measure() primes every kernel before blocking.
class BlockingKernel {
 public:
  BlockingKernel();
  ~BlockingKernel();  // releases a spinner still waiting and waits for its stream before freeing the flag
  BlockingKernel(const BlockingKernel&) = delete;
  BlockingKernel& operator=(const BlockingKernel&) = delete;
  void block(cudaStream_t stream, double timeout_s = kDefaultTimeoutS);
  void release();
  bool timed_out() const;
  static constexpr double kDefaultTimeoutS = 5.0;

 private:
  volatile int* flag_ = nullptr;
  volatile int* timed_out_ = nullptr;
  cudaStream_t last_stream_ = nullptr;
  bool blocking_ = false;
};

using Enqueue = std::function<void(cudaStream_t)>;

struct MeasureSpec {
  Enqueue work;                 // enqueues one unit of work (one copy, one GEMM, ...)
  Enqueue before_sample;        // optional, outside the timed region (an L2 flush, input rotation)
  bool blocking_kernel = true;  // queue the sample behind a BlockingKernel (after one unblocked unit)
  int units_per_sample = 0;     // 0: as many as make a sample last Options::min_sample_seconds
  // At most this many units behind the blocking kernel: each unit is one or a few launches, and the
  // launch queue is finite (a full queue blocks the host that has to release the blocker).
  int max_units_per_sample = 200;
  double max_seconds = 0;  // > 0: a tighter sampling budget than Options::max_seconds (sweep points)
  // > 0: after the first unit, the GPU idles this long (nothing queued) before the warm-up, so a burst
  // measurement starts with the power controller's average recovered from earlier work (GEMM: the search
  // before it ran at the power cap). nvbench similarly pauses when throttled.
  double cooldown_s = 0;
  // > 0: stop once this many samples (fewer than Options::min_samples) converge (cv under the target).
  int min_samples = 0;
  // > 0: stop after this many samples whatever their spread (fewer than Options::max_samples): a GEMM burst
  // is a fixed number of samples, since taking more while its rate drifts (the power cap starting to act)
  // measures the cap, not the burst.
  int max_samples = 0;
  // The warm-up before the samples: at least min_warmup_units one-unit samples and this long (module loads,
  // library caches, clocks leaving idle). A burst shortens it: on the H200 50 ms of GEMMs was enough for the
  // power cap to act, and 3 one-unit samples of a 4.6 ms DGEMM (each with its pre-roll unit) ran 28 ms.
  double warmup_s = 0.05;
  int min_warmup_units = 3;
  // Units every sample runs untimed between the blocking kernel and its start event, so the timed units
  // start on a busy GPU: what an idle-to-busy step costs (clocks and power management reacting, the
  // first launch's ramp) stays out of the sample. Counted in total_units.
  int preroll_units = 0;
  // Optional: what a timed sample's seconds per unit are, given its wall time per unit; called once per
  // timed sample, after its stream synchronised (events the work recorded can be read). A case whose value
  // is not the units' bytes over the wall time (concurrent transfers: the sum of each transfer's own rate)
  // returns amount / value here, so that the stopping rule's cv, the median and the cv reported are all of
  // the value reported, not of the wall time.
  std::function<double(double)> sample_seconds;
};

struct Measurement {
  std::vector<double> unit_seconds;  // per sample: elapsed / units
  // Per sample, beside unit_seconds: the reading taken during its work (read_during_work), nullopt where none was.
  std::vector<std::optional<WorkReading>> sample_readings;
  double median_s = 0, cv = 0;
  int units_per_sample = 1;
  int queue_halvings = 0;  // samples whose blocking kernel timed out, each halving units_per_sample
  long long total_units = 0;  // units enqueued in all, the unblocked first one and warm-up included
  SamplingStop stopped_by = SamplingStop::kContinue;  // why the samples stopped (reported as `stopped_by`)
  TelemetrySummary telemetry;
};

// One unit unblocked (it loads the kernels the work launches: under lazy loading a first launch behind
// the spinning blocker could wait out its timeout), warm-up, then samples. Throws on any CUDA error
// and on a blocking-kernel timeout, except where the sample size is its own (units_per_sample 0): there
// a timeout may mean the launch queue held fewer units than asked: the units are halved (up to 3 times;
// queue_halvings counts them), sampling and telemetry start over, and a size that then goes through is
// the most the rest of the process asks for.
Measurement measure(cudaStream_t stream, const MeasureSpec& spec, const Options& options,
                    const std::shared_ptr<nvml::Device>& nvml);
// Forgets the launch-queue limit measure() learned (for tests that teach it one).
void reset_launch_queue_limit();

// The Google Benchmark side: a case that calls this is registered with configure(); it runs
// `measure` once inside the state loop and reports the median as the iteration time.
Measurement run_measurement(benchmark::State& state, cudaStream_t stream, const MeasureSpec& spec);
benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b);

// What one unit of work does, counted once where the case is defined.
enum class Amount { kBytes, kFlops, kOps };
// Sets the value counter (bytes_per_second, flop_per_second or op_per_second: kIsRate over the
// median) and the measurement counters (cv, samples, telemetry...). `verified` must be the result
// of checking the output; false makes the case an error instead of a number.
void report(benchmark::State& state, const Measurement& m, Amount kind, double amount_per_unit, bool verified,
            const std::string& verification_detail = "");
// For latencies: latency_s is the median time per unit (lower is better).
void report_latency(benchmark::State& state, const Measurement& m, bool verified,
                    const std::string& verification_detail = "");

// Runs a case body; any exception becomes SkipWithError with its message, and the run goes on.
// A message starting "unsupported:" is recorded as skipped rather than as an error.
void guarded(benchmark::State& state, const std::function<void()>& body);

// After kernels::hbm_copy_bulk: throws, naming `what`, where its stall counter (device) is not zero (a bulk
// load that never landed). Synchronises the stream.
void check_bulk_copy_stalls(const unsigned int* stalls, cudaStream_t stream, const std::string& what);

// Throws "unsupported: <reason>" (the case is skipped, not failed).
[[noreturn]] void unsupported(const std::string& reason);

}  // namespace ceilings::bench
