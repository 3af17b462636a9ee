// Fleet and node comparison: groups profiles by hardware/software fingerprint, computes per ceiling the
// median and MAD, and names the GPUs whose ceilings fall below their peers (robust z-score and margin),
// and the GPUs whose recorded health fails qualify's health checks.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ceilings/profile.hpp"
#include "ceilings/qualify.hpp"

namespace ceilings {

// What must match for two GPUs to be compared: model, memory size, driver, CUDA runtime, power limit, how
// many GPUs the measuring process saw (a node's peer ceilings are its slowest pair: an 8-GPU node's and a
// 4-GPU node's are not one population), and which pairs its nvlink ceilings cover (`measure --all-gpus`
// measures each GPU's own pairs, a single run every pair of the node: their slowest pair is not one thing;
// a profile with no nvlink ceiling joins the group that matches it otherwise: see analyze_fleet).
struct Fingerprint {
  std::string gpu;
  std::uint64_t memory_bytes = 0;
  std::string driver, cuda_runtime;
  std::optional<double> power_limit_w;
  std::optional<int> gpus_visible;  // absent in profiles that do not record it
  // true: the nvlink ceilings cover this GPU's pairs only (detail.scope_device 1); false: every pair the
  // process saw; absent where the profile has no nvlink ceiling that records it.
  std::optional<bool> nvlink_own_pairs;
  // The host's CPU model ("" where not recorded): pageable PCIe copies, launch and small-copy latency go
  // with it, so GPUs in servers of another model are not one group's peers.
  std::string host_cpu;
  // The SMs CUDA shows, and whether they are a MIG instance's. Instances of one size are a model of their own
  // (never set against whole GPUs or other sizes); a whole GPU with another SM count than its peers is a
  // difference like a driver's.
  int sm_count = 0;
  bool mig = false;
  // Confidential computing on (device.confidential_computing; off where not recorded): its host<->device copies went
  // through encrypted bounce buffers, another way of moving the data.
  bool confidential_computing = false;
  // Its mode where recorded (device.confidential_computing_mode): "NVLink encryption" encrypts peer copies too.
  std::string confidential_computing_mode;
  bool nvlink_encrypted() const { return nvlink_encryption_mode(confidential_computing_mode); }
  std::string confidential_computing_text() const {
    return ceilings::confidential_computing_text(confidential_computing, confidential_computing_mode);
  }
  // How it was measured: the cuBLAS the bench ran with and the ceilings version with its measurement code (a hash
  // of the sources that decide a number: one release has measured with many) ("" where not recorded). A
  // GEMM or copy kernel of another release is another measurement, not a slower GPU: GPUs measured by
  // different ones are in different groups, and a group that differs from its model's largest only in these (and
  // the NVLink scope) is measured differently, no finding.
  std::string cublas, tool;
  std::string measurement_code;  // tool.measurement_code, "" where not recorded
  bool quick = false;            // measure.quick: a --quick pass (false where not recorded), named with the tool
  // The GPUs measured at the same time (measure.gpus_measured_together; absent where not recorded): GPUs measured
  // together share power, heat and the host's links, so a concurrent run is another way of measuring.
  std::optional<int> measured_together;
  // Of a group joined by profiles that do not record the count: the count is its recording members', and the
  // label and a baseline say it is not known for all (not part of the key).
  bool measured_together_partial = false;
  // "0.1.0 measurement code 5e80af9a17af": the release and, where recorded, the code (what label and differences
  // name as "ceilings").
  std::string tool_text() const;

  std::string key() const;    // exact, for grouping
  // "NVIDIA H200, 132 SMs, 150.8 GB, driver 580.95.05, CUDA 13.0, 700 W, 8 GPUs" ("MIG instance of 16 SMs" for
  // an instance; ", NVLink: own pairs" or ", NVLink: all pairs" where recorded; ", host <CPU model>" where
  // recorded; ", cuBLAS 13.1.0, ceilings 0.1.0 measurement code 5e80af9a17af" where recorded; ", measured 8 GPUs
  // together" or ", one GPU per run" where recorded)
  std::string label() const;
  // One model to compare: the same GPU name, and either both whole GPUs or MIG instances of one size (SMs and
  // memory).
  bool same_model(const Fingerprint& other) const;
  std::string model() const;  // "NVIDIA H200", or "NVIDIA H200 MIG instances of 16 SMs and 17.7 GB"
  json to_json() const;
  // The fields in which this fingerprint differs from `peers`, each as "driver 535.54.03 (peers: 580.95.05)".
  std::vector<std::string> differences(const Fingerprint& peers) const;
};
Fingerprint fingerprint_of(const Profile& profile);

// One ceiling across the members of a group (or the GPUs of a node).
struct CeilingStats {
  std::string name, unit;
  std::size_t n = 0;
  double median = 0, mad = 0, min = 0, max = 0;
  double mean_ad = 0;  // mean absolute deviation from the median: the z-score's scale where the MAD is 0
};

// Outlier rule. A value is worse than its peers when, oriented so that negative is worse (rates: lower;
// latencies: higher), its modified z-score 0.6745*(x - median)/MAD is below minus the z threshold, or when it
// is more than `margin` (a fraction) below the median. Both are computed and reported; either flags it.
// The z threshold is `z_threshold` or, where larger, the one a group of that many values and that many
// comparisons needs so that plain normal noise names nothing with probability 1 - family_alpha
// (z_threshold_for): each GPU's ~50 ceilings are ~50 tests, and the MAD of a small group is itself uncertain.
// When MAD is 0 the z-score uses the mean absolute deviation (x - median)/(1.2533*MeanAD) instead
// (Iglewicz and Hoaglin); when that is 0 too all values are equal and there is no z-score.
// The z-score only names a value that is also at least `min_deficit` worse than the median: a small group's
// MAD can be far below the benchmarks' run-to-run repeatability (~1%), and a 0.3% difference is not a finding.
// Neither rule names a value whose deficit lies within own_spread_for(rule, comparisons) standard errors of its
// own median (1.2533 * cv / sqrt(samples)): a difference its own measurement could not tell apart is not a
// finding. Such a value more than the margin below is unstable: not judged, measure again.
struct OutlierRule {
  double z_threshold = 3.5;      // the least z threshold
  double family_alpha = 0.05;    // chance that a group of plain normal noise has any value named by the z-score
  double margin = 0.05;
  double min_deficit = 0.01;
  double own_spread = 2.0;       // the least own-spread multiple (own_spread_for raises it; 0: no own-spread gate)
  bool use_z = true;             // false: margin only (a node of 8 GPUs is too few for a z-score)
  std::size_t min_members = 3;   // fewer values than this: no verdict (who of two is the odd one?)
};

struct Deviation {
  std::string ceiling, unit;
  double value = 0, median = 0, mad = 0;
  std::optional<double> z;   // oriented: negative is worse
  double deficit = 0;        // fraction worse than the median (0.08: 8% below; negative: better)
  double z_threshold = 0;    // the z threshold it was held to (z_threshold_for); 0 where no z rule applied
  bool by_z = false, by_margin = false;
  double own_noise = 0;      // the deficit its own measurement cannot tell apart (own_spread standard errors)
  double own_spread = 0;     // the standard errors of its own median that is (own_spread_for its comparisons)
  // On the worse side of a gap that splits the group into two populations (see add_population_splits): then
  // `median` and `deficit` are against the better population's median, not the group's (whatever other rule
  // named it too: the group's median sits in the gap and understates the deficit).
  bool by_split = false;
  // A split whose worse side is the group's majority (5 of 8 below 3 that read high): which population is right is
  // not for a comparison among peers to say, so such a deviation is never judged (listed as unstable).
  bool majority_split = false;
};

struct Outlier {
  std::size_t member = 0;             // index into the list the caller passed
  std::vector<Deviation> ceilings;    // the ceilings that drove it, worst first
  double worst_deficit() const;
};

std::vector<CeilingStats> ceiling_statistics(const std::vector<const Profile*>& members);

// The z threshold for a ceiling of `n` values when `comparisons` values are tested together: the larger of
// rule.z_threshold and the z that a value of plain normal noise passes with probability family_alpha /
// comparisons (Bonferroni). The modified z-score of one of n normal values is not normal: the MAD is an
// estimate too, and a small group's can be small by chance. It follows Student's t with about 0.4 n degrees of
// freedom (simulated, tails 1e-3 to 1e-7: 0.49 n at 8 values, 0.42 n at 64, 0.38-0.40 n at 512), so the
// threshold is that t's quantile with 0.4 n - 0.2 (1.0 at 3 values, where 0.4 n let 2-4 times the allowance
// through; from 4 to 24 values it is 2-100 times stricter than it needs): 6.5 for 24 GPUs and 1200 comparisons,
// 5.05 for 4096 GPUs and 200,000. A value judged against another group's statistics (`in_sample` false: a small
// group against its peers) is not part of the sample the median and MAD came from, and its z has heavier
// tails: 0.3 n (simulated: at most the allowance from 3 values up). A family_alpha / comparisons that underflows
// gives an infinite threshold (the strictest request is not the loosest).
// The price is power in small groups: a GPU 7.5 sigma down on one ceiling is named by the z-score in about 2
// of 3 groups of 24 GPUs and 1 in 3 of 16 (a fixed 3.5: nearly always, with 2 GPUs of plain noise named a fleet).
double z_threshold_for(const OutlierRule& rule, std::size_t n, std::size_t comparisons, bool in_sample = true);
// The values find_outliers compares (each member's verified ceilings that have statistics of at least
// rule.min_members values), and of them those it tests by the z-score: none where rule.use_z is false.
std::size_t compared_values(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                            const OutlierRule& rule);
std::size_t z_comparisons(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                          const OutlierRule& rule);
// How many standard errors of its own median a deficit must exceed to be judged when `comparisons` values are
// compared together: the larger of rule.own_spread and the normal z a value of plain measurement noise passes with
// probability family_alpha / comparisons (Bonferroni, as z_threshold_for). Each GPU's ~50 ceilings are ~50 chances
// for noise: with a fixed 2, a clean fleet of 8 H200s whose values scattered by their own standard errors alone
// (pcie.h2d_pageable's cv of 7% over 10 samples: 2.9%) had a GPU named more than 5% below in 8 of 30 runs.
// 3.65 for 384 comparisons (8 GPUs of 48 ceilings), 4.6 for 24,000.
double own_spread_for(const OutlierRule& rule, std::size_t comparisons);

// The profile as GPUs are compared with each other: a peer ceiling (nvlink.*) takes the median of the GPU's own
// pairs (detail.p2p_median) where it has one, not its slowest pair. With one GPU's links degraded every GPU
// of its node has its slowest pair with that GPU; their pair medians single it out.
Profile with_pair_medians(Profile profile);
// `members_in_sample`: the statistics are of these members (a group within itself), not of another group.
// `unstable`, where given, gets the members a rule would name but for their own spread (the deficit within
// own_noise): not judged, never passed in silence (a GPU 12% slow with a cv of 30% is no healthy one).
std::vector<Outlier> find_outliers(const std::vector<const Profile*>& members, const std::vector<CeilingStats>& stats,
                                   const OutlierRule& rule, bool members_in_sample = true,
                                   std::vector<Outlier>* unstable = nullptr);
// Two populations within one group: the median-based rules see none where half the GPUs (or more) are slower
// alike, since the median then sits between or among the slow ones. Per ceiling, the values sorted worse to
// better; where the widest gap between neighbours is more than rule.margin (the better side's worst over the
// worse side's best) and each side holds at least rule.min_members GPUs and a quarter of the group, every GPU on
// the worse side that is
// more than rule.margin below the better side's median, beyond its own measurement's error, is an outlier
// by_split (merged into `outliers`, worst first). `unstable`, where given (find_outliers' list), gets the ones
// within their own error (by_split, against the better side's median; merged into an entry another rule made
// for that ceiling) unless another rule judged that ceiling an outlier; a ceiling the split judges leaves it.
// Where the worse side is the majority, none is judged: each more than the margin below goes to `unstable`
// (majority_split) unless another rule judged that ceiling.
void add_population_splits(const std::vector<const Profile*>& members, const OutlierRule& rule,
                           std::vector<Outlier>& outliers, std::vector<Outlier>* unstable = nullptr);

// The GPUs of one node against each other (`measure --all-gpus`): each model within itself, as `fleet` groups
// them (a server with two models, a workstation's display GPU beside its compute GPUs), by the margin rule and
// the own-spread gate (8 GPUs are too few for a z-score), and by a split of the node in two (half of it slower
// alike, one socket's PCIe switch, moves the median to them). Peer ceilings compare by the GPU's own pairs'
// median (with_pair_medians): with one GPU's links degraded every GPU's slowest pair is its pair with that GPU.
struct NodeComparison {
  std::vector<Outlier> below_peers;  // worst first; member: index into the profiles passed
  std::vector<Outlier> unstable;     // named but for their own measurement's spread: not judged
  std::size_t gpus_compared = 0;     // in a model with at least rule.min_members GPUs
  double own_spread = 0;             // the largest model's own-spread multiple (each deviation carries its own)
  std::vector<std::string> too_few;  // "1 NVIDIA L4": models with fewer GPUs than a comparison needs
};
NodeComparison compare_node(const std::vector<const Profile*>& profiles, double margin);

// Reading many profiles: directories are searched recursively for *.profile.json, following directory
// symlinks, each directory once (by device and inode); files named on the command line are read whatever
// their name. A file that is not a valid profile, a subdirectory that cannot be opened or searched, and a link
// that cannot be followed are skipped with their reason; a path that does not exist, or a directory named on
// the command line that cannot be read, is an InputError. Several runs of one GPU (one device UUID) count
// once, whatever changed between them (a driver, a power limit): the newest (`created`, then the later path)
// stands for it, and the older ones are set aside with the run that replaced them, so a re-measured GPU is
// judged by its latest numbers and never weighs twice in its group's median. A baseline that `--write-baseline` wrote (a document with
// a top-level "baseline" section, e.g. into the directory it scanned) is set aside with its reason: its
// ceilings are medians of GPUs already counted, not a GPU.
struct FleetMember {
  std::string path;
  Profile profile;
};
struct FleetSkip {
  std::string path, reason;
};
struct FleetSuperseded {
  std::string path, uuid, created;
  std::string newer_path, newer_created;  // the run of the same GPU that stands for it
  std::string host, newer_host;           // their hosts: two differ where a GPU moved, or a profile was copied
};
// A GPU a node summary (`<host>.node-summary.json`, ceilings.node/1, which `measure --all-gpus` writes beside the
// profiles) lists that did not finish (failed, timed out, interrupted, never started, or still running when the
// summary was last written), or that finished with no profile among the files read: a GPU that could not be
// judged. A profile of the same GPU newer than the summary (measured again since) stands for it.
struct FleetUnfinished {
  std::string summary;  // the node summary's path
  std::string host, uuid, pci_bus_id, state, reason;
  std::int64_t index = -1;
  bool partial_compared = false;  // the cases it finished are in a profile among the members, compared as such
};

// A GPU a node summary's comparison named below its node's peers (`measure --all-gpus`: against its node's
// median). The fleet judges it against its group's median instead, which may not name it (a node whose other GPUs
// are faster than the fleet's): listed where the fleet does not, so that the two verdicts are not left unexplained.
struct FleetNodeFinding {
  std::string summary;  // the node summary's path
  std::string host, uuid, pci_bus_id;
  std::int64_t index = -1;
  std::vector<std::string> ceilings;  // "hbm.copy 4.19 TB/s, 5.3% below the node median 4.43 TB/s"
};

struct FleetInput {
  std::vector<FleetMember> members;
  std::vector<FleetUnfinished> unfinished;
  std::vector<FleetNodeFinding> node_below_peers;  // from the node summaries read, one per GPU (the newest run's)
  std::size_t node_summaries = 0;  // node summaries read
  std::vector<std::string> summary_hosts;  // their hosts
  std::vector<FleetSkip> skipped;
  std::vector<FleetSuperseded> superseded;  // older runs of a GPU that has a newer one among the members
  std::vector<FleetSkip> baselines;  // fleet baselines (a top-level "baseline" section): medians, not a GPU
  std::size_t files = 0;  // files looked at
};
FleetInput load_fleet(const std::vector<std::string>& paths);

// The hosts a job ran on (`--expect-hosts`): one name a line, as `scontrol show hostnames "$SLURM_JOB_NODELIST"`
// prints them; spaces around a name, blank lines and lines starting with '#' are ignored, and a repeat counts
// once. A line with a space or a control character inside, or a list with no host, is an InputError that names it.
std::vector<std::string> read_host_list(const std::string& path);
// The hosts expected against those the fleet read from (a profile's hostname, a node summary's host). A node
// that wrote nothing at all (it never started, its disk was full, its job step died before the first GPU) is
// otherwise unseen. Names compare case-blind, and by their first label where one of the two has no domain
// ("gpu001" is "gpu001.cluster.local").
struct HostCheck {
  std::string list;                     // the list's path
  std::size_t expected = 0;
  std::vector<std::string> missing;     // listed, nothing read from it: not judged (incomplete)
  std::vector<std::string> not_listed;  // read, not listed (a note: another job's files, or names of another form)
};
HostCheck check_hosts(const FleetInput& in, const std::string& list, const std::vector<std::string>& expected);

// A ceiling the group's peers have (n >= OutlierRule::min_members) that a member lacks, with the reason its
// profile gives: a measurement that failed (`errors`) is a finding that fails; one not measured (`skipped`)
// or absent with no reason recorded is a note.
struct MissingCeiling {
  std::size_t member = 0;  // index into FleetGroup::members
  std::string ceiling, unit;
  bool error = false;      // listed under the profile's `errors`
  std::string reason;      // "measurement failed: ...", "not measured: ...", "not in the profile, no reason recorded"
};

// A host whose GPUs in a group are, taken together, below the group's other hosts.
struct HostOutlier {
  std::string host;
  std::vector<std::size_t> members;  // its GPUs, indices into FleetGroup::members
  std::vector<Deviation> ceilings;   // Deviation::value: the host's median over them; median: the hosts' median
};

struct FleetGroup {
  Fingerprint fingerprint;
  std::vector<std::size_t> members;  // indices into FleetInput::members
  std::vector<CeilingStats> stats;    // of the ceilings as measured (a peer ceiling: its slowest pair)
  std::vector<CeilingStats> compared_stats;  // of the ceilings as compared (with_pair_medians)
  std::vector<Outlier> outliers;     // Outlier::member indexes `members` of this group
  std::vector<Outlier> unstable;     // named but for their own spread (find_outliers, the split): not judged
  std::size_t z_comparisons = 0;     // the values the group's z-score tested (z_comparisons)
  double z_threshold = 0;            // its threshold for a ceiling every member has (z_threshold_for)
  double own_spread = 0;             // the standard errors of its own median a deficit must exceed (own_spread_for)
  std::vector<MissingCeiling> missing;  // ceilings of the group's statistics a member has no value for
  // The model's largest group where this one differs from it only in how it was measured (NVLink scope, cuBLAS,
  // ceilings release, GPUs measured together; `differences` says which): no finding, not set against it.
  std::optional<std::size_t> measured_unlike;

  // A group of fewer than OutlierRule::min_members profiles is not compared within itself (too_small). Every
  // group but the largest of its GPU model (device name) that has enough members has that group as its
  // `peer_group`, whatever its own size, and `differences` names what is configured differently (driver,
  // power limit, ...): nodes set up unlike their model's fleet are a finding. `versus_peers` holds its
  // members' ceilings that are worse than the peer group's medians by the same rule (context for the finding;
  // Outlier::member indexes `members` of this group). A too-small group with no such peer group has nothing
  // to compare it with: it could not be judged.
  // A group that differs from its peer group only by the host's CPU model (servers of another model, not a
  // node set up otherwise; perhaps measured with another NVLink scope too) is `host_only`: set against the peer
  // group on the GPU's own ceilings (not those the host bounds: host_bound_ceiling), and a finding only for the
  // GPUs worse there; one as large as the peer group is set against neither (no reference between them).
  bool too_small = false;
  std::optional<std::size_t> peer_group;  // index into the vector analyze_fleet returns
  std::vector<std::string> differences;
  std::vector<Outlier> versus_peers;
  // Its members that are worse than the peer group's medians by the same rule but within their own spread
  // (find_outliers' `unstable`): not judged. A ceiling already listed within the group (an outlier or unstable
  // there) is not listed again; in a host_only group, only the GPU's own ceilings.
  std::vector<Outlier> unstable_versus_peers;
  bool host_only = false;
  // Measured with fewer GPUs at once than the peer group (and otherwise like it, or only in servers of another CPU):
  // set against the peers as a host_only group is, its GPUs found slower the only findings (sharing less of the
  // node's power, cooling and host links can only raise a ceiling). The model's largest group too, where it measured
  // with fewer at once than a group large enough and otherwise alike: that group is then its peer group.
  bool fewer_together = false;
  // A group as large as the largest of its model and configured otherwise (not only by its hosts' CPU or
  // its nvlink scope): the model is set up two ways in equal numbers. Neither is named as the odd one
  // (`differences` says how they differ); both groups' GPUs count as configured two ways.
  std::optional<std::size_t> split_with;  // index into the vector analyze_fleet returns
  // Hosts below the group's other hosts: each host's median over its GPUs here (2 or more) set against the medians
  // of the group's hosts (8 or more) by the rule GPUs are judged by, its z threshold over hosts x ceilings (review
  // 109: a node 3% slow on every GPU alike, each GPU within the noise between GPUs, was named by nothing).
  std::vector<HostOutlier> hosts_below;
};
// Ceilings the host's CPU and memory bound as much as the GPU: pageable copies (staged through host memory by
// the CPU), launch latency (the host's submission path) and small-copy latencies (pinned host memory across the
// server's PCIe root). Not latency.graph_launch: one submission for a 1000-node graph, its per-node cost the GPU's
// (807 ns a node on the H200, 803 timed on the GPU alone).
bool host_bound_ceiling(const std::string& name);
// A ceiling confidential computing moves: the host<->device copies (pcie.*) and the host-bound ceilings, whose copies
// and launches go through the driver's encrypted bounce buffers with it on; with `nvlink_encrypted` (either side in
// its NVLink-encryption mode) the peer copies (nvlink.*) too.
bool confidential_computing_bound_ceiling(const std::string& name, bool nvlink_encrypted = false);
// Groups sorted by size (largest first), then by label.
std::vector<FleetGroup> analyze_fleet(const std::vector<FleetMember>& members, const OutlierRule& rule);

// The findings over all groups, as the summary line, the JSON and the exit code count them.
struct FleetFindings {
  std::size_t outliers = 0;         // outliers within groups
  // GPUs set against the largest group of their model: every GPU of a group configured otherwise
  std::size_t unlike_peers = 0;
  // GPUs of a group set against a larger one of their model only for deficits (in other servers, host_only, or
  // measured with fewer GPUs at once, fewer_together) found below its medians; its other GPUs are not findings
  std::size_t below_peers = 0;
  std::size_t not_judged = 0;       // GPUs of a too-small group with no group of their model to compare with
  // GPUs below their peers (their group's median, the better side of its split, or the peer group's medians) by
  // less than their own spread, each once: not judged
  std::size_t unstable = 0;
  std::size_t two_ways = 0;         // GPUs of equal-size groups of one model configured differently (split_with)
  std::size_t missing_failed = 0;   // ceilings a member lost to a failed measurement while its peers have them
  std::size_t hosts_below = 0;      // hosts below their group's other hosts (FleetGroup::hosts_below)
};
FleetFindings count_findings(const std::vector<FleetGroup>& groups);
// The groups `gi` is set up two ways with (split_with either way round), in order; each with what differs,
// as "driver 570.86.15 (peers: 580.95.05)" from group gi's side.
struct TwoWayPartner {
  std::size_t group;
  std::vector<std::string> differences;
};
std::vector<TwoWayPartner> two_way_partners(const std::vector<FleetGroup>& groups, std::size_t gi);

// Health across the fleet: each member's health section judged by qualify's health checks (the rules given:
// qualify's defaults unless `fleet --rules` names a file). A GPU fast enough for its group can still be failing (an uncorrected ECC error, a link
// retraining, XIDs): those are named here whatever their group. Members with no failing check but some
// check that could not be judged (no section, XID events unsupported, ...) are only counted. A profile with
// entries under `errors` (a measurement that failed, e.g. verification) fails a "measurement errors" check,
// as `qualify` fails it, and a ceiling below the rules' fraction of its datasheet, outside a limit the rules set
// for it, or past what the GPU can attain fails too (a fleet slow as a whole moves its own median with it).
struct FleetHealthFault {
  std::size_t member = 0;     // index into FleetInput::members
  std::vector<Check> failed;  // the failing checks, with their reasons
};
struct FleetHealth {
  std::vector<FleetHealthFault> faults;
  std::size_t incomplete = 0;  // members with no failing check and at least one incomplete one
  // Members a timeout or an interrupt cut short (a case stopped while it ran, as `measure` words it): not
  // judged in full, whatever else they show (qualify's exit 3, not a measurement that failed).
  std::vector<std::size_t> cut_short;  // indices into the members
  // Members whose health section was recorded on another GPU than the profile's (files mixed up): their health
  // is not known, and the run is incomplete (as qualify's "same GPU" row).
  std::vector<std::size_t> other_gpu;
  // Members whose health section was read through another NVML than the driver's (CEILINGS_NVML_LIBRARY: the
  // self-test's fake): named, as qualify says it beside its verdict (review 104: fleet said nothing).
  std::vector<std::size_t> other_nvml;
  std::string rules_origin;            // where the rules came from (Rules::origin)
  // The rules' limits on a ceiling no profile holds (measured, failed or skipped): they judged no GPU, so the run is
  // incomplete, each said with its near names (review 90: exit 0 without a word; review 92: not bad input, as a
  // --filter run or an older build's profiles may lack a ceiling whose name is right).
  std::vector<std::string> rules_unheld;
};
FleetHealth fleet_health(const std::vector<FleetMember>& members, const Rules& rules = default_rules());
// Which GPU a finding is about, in the JSON: its file, host, index, UUID and bus id.
json gpu_identity(const FleetMember& m);

// The node summaries' findings (FleetInput::node_below_peers) of GPUs the fleet compared within their group (one
// large enough) and names there neither as an outlier, unstable, nor unlike its peers.
std::vector<const FleetNodeFinding*> node_findings_not_named(const FleetInput& input,
                                                             const std::vector<FleetGroup>& groups);

json fleet_to_json(const FleetInput& input, const std::vector<FleetGroup>& groups, const OutlierRule& rule,
                   const FleetHealth& health, const std::optional<HostCheck>& hosts = std::nullopt);

// A baseline for `ceilings qualify --baseline`: a ceilings.profile/1 document whose device is the group's
// (first member's fingerprint; index, UUID and bus id are not one GPU's and say so), whose ceilings are the
// group medians, and whose "baseline" section says what it came from. A ceiling fewer than `min_members` of
// the group's profiles hold is left out (listed under baseline.left_out): one GPU would set it. The medians are
// of the members the fleet found nothing against: the group's outliers (in a group split in two, its slower side)
// and unstable members are left out, and so are the `excluded` (indices into `members`, with the reason: a health
// fault, a run cut short), each listed under baseline.excluded. A baseline of every member had set the slower
// side's value as the reference its GPUs then passed (review 46).
Profile fleet_baseline(const FleetGroup& group, const std::vector<FleetMember>& members, std::size_t min_members = 3,
                       const std::map<std::size_t, std::string>& excluded = {});

}  // namespace ceilings
