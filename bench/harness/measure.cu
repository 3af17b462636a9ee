// Timing, blocking kernel, device buffers and counter reporting for every family.
#include "measure.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "ceilings/kernels/hbm.cuh"
#include "ceilings/stats.hpp"
#include "nvml.hpp"

namespace ceilings::bench {

namespace {

// A series of at most this many samples keeps each one's time, clock and reasons (report_common's sample_*
// counters); so a series capped at this many reads NVML during every sample's work, whatever the polling period
// (a GEMM burst's samples come every few ms; the period would leave most without a reading).
constexpr std::size_t kSeriesSamples = 8;

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_until_released(volatile int* flag, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long start = global_timer_ns();
  while (*flag == 0) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(200);
  }
}

std::string seconds_text(double s) {
  std::ostringstream os;
  os.precision(3);
  os << s << " s";
  return os.str();
}

std::string gib(std::size_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return os.str();
}

class EventPair {
 public:
  double seconds() const { return elapsed_seconds(start, stop); }
  // Whether the work recorded before `stop` is still running. A not-ready query may leave cudaErrorNotReady as
  // the last error (PyTorch clears it after its event queries too), and guarded() fails a case on any last
  // error: it is cleared, and no query is made while an earlier error waits to be reported.
  bool stop_pending() const {
    if (cudaPeekAtLastError() != cudaSuccess) return false;
    if (cudaEventQuery(stop.get()) != cudaErrorNotReady) return false;  // done, or an error the synchronize reports
    (void)cudaGetLastError();
    return true;
  }
  Event start, stop;
};

}  // namespace

void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t rc = cudaMalloc(&p, bytes);
  if (rc == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free allocation error
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw CheckError("cudaMalloc(" + gib(bytes) + ")", "out of device memory (" + gib(free_b) + " free of " +
                                                           gib(total_b) + ")", __FILE__, __LINE__);
  }
  CEILINGS_CUDA_CHECK(rc);
  return p;
}

// Both poison the vectors at 0, kPoisonStride, 2 kPoisonStride, ... that lie wholly inside the buffer, and the
// last one (a buffer shorter than a vector: all of it). On the device one small kernel does it (a 2D memset
// would be one row per vector: 2^17 rows for an 8 GiB array).
void poison_stride_device(void* device, std::size_t bytes, int value, cudaStream_t stream) {
  constexpr std::size_t kVector = 16;
  if (bytes < kVector) {
    if (bytes) CEILINGS_CUDA_CHECK(cudaMemsetAsync(device, value, bytes, stream));
    return;
  }
  if (reinterpret_cast<std::uintptr_t>(device) % kVector != 0)
    throw std::invalid_argument("poison_stride_device: the buffer is not 16-byte aligned");
  const std::uint32_t word = 0x01010101u * static_cast<std::uint8_t>(value);
  kernels::poison_strided(static_cast<uint4*>(device), bytes / kVector, kPoisonStride / kVector, word, stream);
  CEILINGS_LAUNCH_CHECK();
  // A size that is not a whole number of vectors: its last 16 bytes, which the vectors do not reach.
  if (bytes % kVector)
    CEILINGS_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(device) + bytes - kVector, value, kVector, stream));
}

void poison_stride_host(void* host, std::size_t bytes, int value) {
  constexpr std::size_t kVector = 16;
  auto* p = static_cast<char*>(host);
  if (bytes < kVector) {
    std::memset(p, value, bytes);
    return;
  }
  for (std::size_t at = 0; at + kVector <= bytes; at += kPoisonStride) std::memset(p + at, value, kVector);
  std::memset(p + bytes - kVector, value, kVector);
}

Stream::Stream() { CEILINGS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (stream_) cudaStreamDestroy(stream_);
}
void Stream::sync() const { CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

Event::Event(unsigned flags) { CEILINGS_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }
Event::~Event() {
  if (event_) cudaEventDestroy(event_);
}
double elapsed_seconds(const Event& from, const Event& to) {
  float ms = 0;
  CEILINGS_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return ms * 1e-3;
}

BlockingKernel::BlockingKernel() {
  void* p = nullptr;
  CEILINGS_CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = flag_ + 1;
  flag_[0] = 0;
  timed_out_[0] = 0;
}

BlockingKernel::~BlockingKernel() {
  if (!flag_) return;
  flag_[0] = 1;  // never leave a spinner behind
  // A case that threw between block() and release() still has the spinner (and its queued work) in
  // flight: wait for it before the flag's memory goes, or the spinner reads freed host memory.
  if (blocking_) cudaStreamSynchronize(last_stream_);
  cudaFreeHost(const_cast<int*>(flag_));
}

void BlockingKernel::block(cudaStream_t stream, double timeout_s) {
  flag_[0] = 0;
  timed_out_[0] = 0;
  int* dflag = nullptr;
  CEILINGS_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dflag), const_cast<int*>(flag_), 0));
  spin_until_released<<<1, 1, 0, stream>>>(dflag, dflag + 1, static_cast<unsigned long long>(timeout_s * 1e9));
  CEILINGS_LAUNCH_CHECK();
  last_stream_ = stream;
  blocking_ = true;
}

void BlockingKernel::release() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flag_[0] = 1;
  blocking_ = false;
}

bool BlockingKernel::timed_out() const { return timed_out_[0] != 0; }

namespace {
// The most units a sample has been able to queue behind the blocking kernel in this process (learned when a
// sample's blocking kernel timed out and half as many went through: see measure()).
int g_queue_units = std::numeric_limits<int>::max();
}  // namespace

void reset_launch_queue_limit() { g_queue_units = std::numeric_limits<int>::max(); }

Measurement measure(cudaStream_t stream, const MeasureSpec& spec, const Options& options,
                    const std::shared_ptr<nvml::Device>& nvml) {
  using clock = std::chrono::steady_clock;
  Measurement m;
  EventPair ev;
  BlockingKernel blocker;
  TelemetrySampler telemetry(nvml);  // started once the samples are sized

  // A series of at most kSeriesSamples (a GEMM burst's fixed count): one whose every sample keeps its clock.
  const bool short_series =
      std::min(spec.max_samples > 0 ? spec.max_samples : options.max_samples, options.max_samples) <=
      static_cast<int>(kSeriesSamples);
  std::string blocker_timeout;  // why the last sample's blocking kernel gave up, if it did
  std::optional<WorkReading> work_reading;  // what the last sample's reading during its work saw

  double expected_work_s = 0;   // a sample's work (its pre-roll included) as the warm-up timed it; 0 before
  // One sample's elapsed time; nullopt when the blocking kernel gave up waiting for the host (its work
  // still ran, and counts in total_units).
  auto run_sample = [&](int units, bool blocking) -> std::optional<double> {
    work_reading.reset();
    if (spec.before_sample) {
      spec.before_sample(stream);
      // Unblocked, the work's host side (a pageable copy's staging) could start while the poison still runs,
      // before the start event it is timed from.
      if (!blocking) CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (blocking) blocker.block(stream);
    const auto enqueue_start = clock::now();
    for (int u = 0; u < spec.preroll_units; ++u) spec.work(stream);
    m.total_units += spec.preroll_units;
    CEILINGS_CUDA_CHECK(cudaEventRecord(ev.start.get(), stream));
    for (int u = 0; u < units; ++u) spec.work(stream);
    m.total_units += units;
    CEILINGS_CUDA_CHECK(cudaEventRecord(ev.stop.get(), stream));
    const double enqueue_s = std::chrono::duration<double>(clock::now() - enqueue_start).count();
    if (blocking) blocker.release();
    // The work is queued and (released from the blocking kernel) running: read the GPU at it before waiting
    // for it, not only at the window's edges, after a synchronize has drained the stream. The reading is taken
    // halfway through the work, not as it starts (a GEMM burst's pre-roll unit runs first, and a power cap
    // shows once the work has drawn power a while); the host would wait for the work here anyway. Work that is
    // done already (a pageable copy, staged by the host as it was queued; a sample shorter than the query)
    // gets no reading, nor a wait: one taken after it is not a reading of the GPU at work.
    if (ev.stop_pending()) {
      const auto work_from = blocking ? clock::now() : enqueue_start;
      if (expected_work_s > 0)
        std::this_thread::sleep_until(work_from + std::chrono::duration_cast<clock::duration>(
                                                      std::chrono::duration<double>(expected_work_s / 2)));
      // A series of at most kSeriesSamples keeps each sample's clock (sample_sm_clock_hz_N): a reading at every
      // sample, the clock alone where the period has none due. Not the first samples of every series: that cost
      // every case 8 readings' idle gaps, for keys only a GEMM burst keeps (review 55).
      if (ev.stop_pending())
        work_reading = telemetry.read_during_work(short_series, [&ev] { return ev.stop_pending(); });
    }
    CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (blocking && blocker.timed_out()) {
      blocker_timeout = "timed out (" + seconds_text(BlockingKernel::kDefaultTimeoutS) + ") while the host took " +
                        seconds_text(enqueue_s) + " to enqueue " + std::to_string(units + spec.preroll_units) +
                        " unit(s) behind it: a full launch queue or a call that waits for the GPU";
      return std::nullopt;
    }
    return ev.seconds();
  };
  auto timed_out = [&] { return CheckError("blocking kernel", blocker_timeout, __FILE__, __LINE__); };

  // One unit first with no blocking kernel. Under lazy module loading (CUDA's default) a kernel's
  // first launch may need the context to synchronise, which cannot finish while the blocking kernel
  // spins: the host would wait for the GPU and the GPU for the host until the spinner's timeout, and
  // the case would fail (nvbandwidth preloads its kernels for the same reason). This loads whatever
  // the work launches outside any blocked region. Counted in total_units like every other unit.
  if (spec.blocking_kernel) {
    spec.work(stream);
    m.total_units += 1;
    CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (spec.cooldown_s > 0) {
    CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::this_thread::sleep_for(std::chrono::duration<double>(spec.cooldown_s));
  }

  // Warm-up: module load, clocks ramping, caches of the library; at least spec.min_warmup_units units (one at
  // least: its time sizes the samples) and spec.warmup_s.
  const auto warm_start = clock::now();
  double unit_s = 0;
  const int min_warmup = std::max(1, spec.min_warmup_units);
  for (int i = 0;
       i < min_warmup || std::chrono::duration<double>(clock::now() - warm_start).count() < spec.warmup_s; ++i) {
    const auto t = run_sample(1, spec.blocking_kernel);
    if (!t) throw timed_out();
    unit_s = *t;
    if (i > 1000) break;
  }
  const bool auto_units = spec.units_per_sample <= 0;
  int units = spec.units_per_sample;
  if (auto_units) {
    // A unit too short for the events to resolve (0 s) needs the most units a sample may hold, not one.
    units = unit_s > 0 ? static_cast<int>(std::ceil(options.min_sample_seconds / unit_s)) : spec.max_units_per_sample;
    // The pre-roll queues behind the blocking kernel too: it counts against the queue's limits.
    const int preroll = spec.blocking_kernel ? std::max(0, spec.preroll_units) : 0;
    const int room = std::min(spec.max_units_per_sample, g_queue_units) - preroll;
    units = std::clamp(units, 1, std::max(1, room));
  }
  m.units_per_sample = units;
  expected_work_s = unit_s * (units + std::max(0, spec.preroll_units));

  telemetry.start();
  auto start = clock::now();
  SamplingRule rule;
  rule.budget_s = spec.max_seconds > 0 ? std::min(spec.max_seconds, options.max_seconds) : options.max_seconds;
  rule.min_samples = spec.min_samples > 0 ? std::min(spec.min_samples, options.min_samples) : options.min_samples;
  rule.max_samples = spec.max_samples > 0 ? std::min(spec.max_samples, options.max_samples) : options.max_samples;
  rule.target_cv = options.target_cv;
  while (true) {
    const auto t = run_sample(units, spec.blocking_kernel);
    if (!t) {
      // Perhaps the launch queue held fewer units than this behind the blocking kernel: try half as many, a
      // few times; the samples so far were of another size, and the telemetry and the budget covered the
      // spinner's idle wait, so all three start over. (A timeout with another cause, a call in the work that
      // waits for the GPU, survives the halvings and fails the case.)
      if (!auto_units || units <= 1 || m.queue_halvings >= 3) throw timed_out();
      units /= 2;
      m.units_per_sample = units;
      expected_work_s = unit_s * (units + std::max(0, spec.preroll_units));
      m.unit_seconds.clear();
      m.sample_readings.clear();
      ++m.queue_halvings;
      (void)telemetry.stop();
      telemetry.start();
      start = clock::now();
      continue;
    }
    // A size that went through after a timeout: the most the rest of the process asks for (what queued
    // behind the blocker: the pre-roll too).
    if (m.queue_halvings > 0) g_queue_units = std::min(g_queue_units, units + std::max(0, spec.preroll_units));
    m.unit_seconds.push_back(spec.sample_seconds ? spec.sample_seconds(*t / units) : *t / units);
    m.sample_readings.push_back(work_reading);
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    m.stopped_by = sampling_stop(m.unit_seconds, elapsed, rule);
    if (m.stopped_by != SamplingStop::kContinue) break;
  }
  m.telemetry = telemetry.stop();
  m.median_s = median(m.unit_seconds);
  m.cv = coefficient_of_variation(m.unit_seconds);
  return m;
}

Measurement run_measurement(benchmark::State& state, cudaStream_t stream, const MeasureSpec& spec) {
  Measurement m;
  for (auto _ : state) {
    m = measure(stream, spec, context().options, context().nvml);
    state.SetIterationTime(m.median_s);
  }
  return m;
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b) {
  return b->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

namespace {

void report_common(benchmark::State& state, const Measurement& m, bool verified, const std::string& detail) {
  if (!verified) throw CheckError("verification", detail.empty() ? "output does not match" : detail, __FILE__, __LINE__);
  auto& c = state.counters;
  c["verified"] = 1;
  c["cv"] = m.cv;
  // Beside the cv (stddev / mean), a spread one stalled sample cannot inflate: 1.4826 * MAD / median, which
  // equals the cv for normal noise, over the same samples (each case sets them before reporting).
  if (m.unit_seconds.size() >= 2) {
    const double mid = median(m.unit_seconds);
    if (mid > 0) c["robust_cv"] = 1.4826 * median_absolute_deviation(m.unit_seconds) / mid;
  }
  c["samples"] = static_cast<double>(m.unit_seconds.size());
  // A short series (a fixed-count GEMM burst takes 5) in the order its samples were taken: whether the rate decays
  // over the burst (a power cap closing in) or holds, which the median and the cv cannot tell apart (review 49:
  // fp64's configuration read 61.2 TFLOP/s re-timed from rest and 56.8 in its burst).
  // With each, the SM clock and the clock-event reasons of the reading taken during its work, where one was.
  if (m.unit_seconds.size() <= kSeriesSamples)
    for (std::size_t k = 0; k < m.unit_seconds.size(); ++k) {
      const std::string n = std::to_string(k);
      c["sample_unit_s_" + n] = m.unit_seconds[k];
      if (k >= m.sample_readings.size() || !m.sample_readings[k]) continue;
      const WorkReading& r = *m.sample_readings[k];
      if (r.sm_hz) c["sample_sm_clock_hz_" + n] = *r.sm_hz;
      if (r.reasons) c["sample_clock_reasons_" + n] = static_cast<double>(*r.reasons);
    }
  // Every measurement measure() or a sustained window made has its reason; one assembled otherwise has none to give.
  if (m.stopped_by != SamplingStop::kContinue) c["stopped_by"] = static_cast<double>(m.stopped_by);
  c["units_per_sample"] = m.units_per_sample;
  if (m.queue_halvings > 0) c["launch_queue_halvings"] = m.queue_halvings;
  c["telemetry"] = m.telemetry.available ? 1 : 0;
  c["throttled"] = m.telemetry.throttled ? 1 : 0;
  if (m.telemetry.available) {
    c["sm_clock_hz"] = m.telemetry.sm_clock_hz_median;
    c["sm_clock_min_hz"] = m.telemetry.sm_clock_hz_min;
    c["mem_clock_hz"] = m.telemetry.mem_clock_hz_median;
    c["power_w"] = m.telemetry.power_w_median;
    c["power_max_w"] = m.telemetry.power_w_max;
    if (m.telemetry.power_instant_w_median) {
      c["power_instant_w"] = *m.telemetry.power_instant_w_median;
      c["power_instant_readings"] = m.telemetry.power_instant_readings;
    }
    if (m.telemetry.power_instant_w_max) c["power_instant_max_w"] = *m.telemetry.power_instant_w_max;
    c["temp_c"] = m.telemetry.temp_c_max;
    c["throttle_reasons"] = static_cast<double>(m.telemetry.throttle_reasons);
    c["telemetry_readings"] = m.telemetry.readings;
    c["telemetry_window_s"] = m.telemetry.window_s;
    // Also where every call waited and took none: the time they kept the measuring thread from the samples.
    if (m.telemetry.work_readings > 0 || m.telemetry.work_read_max_s > 0) {
      c["work_readings"] = m.telemetry.work_readings;
      c["work_read_max_s"] = m.telemetry.work_read_max_s;
    }
    if (m.telemetry.reason_readings > 0) {
      c["reason_readings"] = m.telemetry.reason_readings;
      c["power_cap_readings"] = m.telemetry.power_cap_readings;
      c["hw_slowdown_readings"] = m.telemetry.hw_slowdown_readings;
    }
    if (m.telemetry.power_violation_s) c["power_violation_s"] = *m.telemetry.power_violation_s;
    if (m.telemetry.thermal_violation_s) c["thermal_violation_s"] = *m.telemetry.thermal_violation_s;
    if (m.telemetry.energy_j) c["energy_j"] = *m.telemetry.energy_j;
    if (m.telemetry.energy_interval_s) c["energy_interval_s"] = *m.telemetry.energy_interval_s;
    if (m.telemetry.power_mean_w) c["power_mean_w"] = *m.telemetry.power_mean_w;
  }
}

}  // namespace

void check_bulk_copy_stalls(const unsigned int* stalls, cudaStream_t stream, const std::string& what) {
  unsigned int stalled = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&stalled, stalls, sizeof stalled, cudaMemcpyDeviceToHost, stream));
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (stalled)
    throw std::runtime_error(what + ": " + std::to_string(stalled) + " block(s) gave up waiting 5 s for a bulk load to land");
}

void report(benchmark::State& state, const Measurement& m, Amount kind, double amount, bool verified,
            const std::string& verification_detail) {
  report_common(state, m, verified, verification_detail);
  const char* name = kind == Amount::kBytes ? "bytes_per_second" : kind == Amount::kFlops ? "flop_per_second" : "op_per_second";
  // Iterations(1) and manual time = the median: the rate is amount / median, in SI units.
  state.counters[name] = benchmark::Counter(amount, benchmark::Counter::kIsRate);
  state.counters[kind == Amount::kBytes ? "bytes" : kind == Amount::kFlops ? "flop" : "ops"] = amount;
}

void report_latency(benchmark::State& state, const Measurement& m, bool verified, const std::string& detail) {
  report_common(state, m, verified, detail);
  state.counters["latency_s"] = m.median_s;
}

namespace {
// Set once a case leaves the CUDA context broken (a sticky error: an illegal address, a kernel fault):
// every later case of this process would fail at its first CUDA call and seem to be at fault itself.
std::string g_context_lost;
}  // namespace

void guarded(benchmark::State& state, const std::function<void()>& body) {
  if (!g_context_lost.empty()) {
    state.SkipWithError(("not run: an earlier case of this process left its CUDA context broken (" + g_context_lost +
                         "); `ceilings measure` runs each family in a process of its own")
                            .c_str());
    return;
  }
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  } catch (...) {
    state.SkipWithError("unknown exception");
  }
  // A sticky CUDA error would poison every case after this one: surface it here, and after a failed case
  // ask the device whether its context survived (a sticky error is returned by every later call).
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess && !state.error_occurred())
    state.SkipWithError((std::string("CUDA error after the case: ") + cudaGetErrorName(rc)).c_str());
  if (state.error_occurred()) {
    const cudaError_t sync = cudaDeviceSynchronize();
    if (sync != cudaSuccess && cudaGetLastError() != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess)
      g_context_lost = cudaGetErrorName(sync);
  }
}

void unsupported(const std::string& reason) { throw std::runtime_error("unsupported: " + reason); }

}  // namespace ceilings::bench
