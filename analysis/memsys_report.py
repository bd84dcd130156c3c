#!/usr/bin/python3
"""Summary tables of a memory-system run (cxlsim --model memsys) from its HDF5 file.

    /usr/bin/python3 analysis/memsys_report.py run.h5

Per CN: loads and stores, hit rate per cache level, remote misses, upgrades,
mean load and store latency; per MN: requests served, queued requests, mean
service time, DRAM bandwidth used; per port: bytes per class and link
utilisation over the simulated time; and the engine's time split per rank.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cxlsim_h5  # noqa: E402


def pct(a, b):
    return f"{100.0 * a / b:5.1f}%" if b else "    -"


def ns(ps):
    return f"{ps / 1000.0:8.1f}"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip())
        return 2
    run = cxlsim_h5.load(argv[1])
    if run.attrs.get("model") != "memsys":
        print(f"{argv[1]}: model is {run.attrs.get('model')!r}, not memsys")
        return 2
    sim_ps = int(run.attrs["final_time_ps"]) or 1
    print(f"{argv[1]}: status {run.attrs['status']}, simulated {sim_ps / 1e6:.3f} us, "
          f"{int(run.attrs['nranks'])} ranks, checksum {int(run.attrs['checksum']):#018x}")

    cns = [n for n, t in enumerate(run.node_type) if t == "cn" and n in run.nodes]
    mns = [n for n, t in enumerate(run.node_type) if t == "mn" and n in run.nodes]

    print("\nCN    loads   stores     L1 hit    L2 hit    L3 hit   remote  upgrades  load ns  store ns")
    for n in cns:
        c = run.nodes[n]
        hit = {lv: pct(c[f"{lv}/hits"], c[f"{lv}/hits"] + c[f"{lv}/misses"]) for lv in ("l1", "l2", "l3")}
        ld, st = c["cn/load_latency_ps"], c["cn/store_latency_ps"]
        print(f"{n:<4}{c['cn/loads']:>8}{c['cn/stores'] + c['cn/rmws']:>9}   {hit['l1']}   {hit['l2']}"
              f"   {hit['l3']}{c['cn/remote_misses']:>9}{c['cn/upgrades']:>10} {ns(ld.mean) if ld.count else '       -'}"
              f"  {ns(st.mean) if st.count else '       -'}")

    print("\nMN   GETS    GETM  queued  invs  recalls  service ns  DRAM GB/s")
    for n in mns:
        c = run.nodes[n]
        svc = c["home/service_ps"]
        gbps = c["dram/bytes"] / (sim_ps * 1e-12) / 1e9
        print(f"{n:<4}{c['home/rx_gets']:>6}{c['home/rx_getm']:>8}{c['home/queued']:>8}"
              f"{c['home/invs_sent']:>6}{c['home/recalls']:>9}  {ns(svc.mean) if svc.count else '       -'}"
              f"  {gbps:9.2f}")

    print("\nport  tx bytes (mem)  rx bytes (mem)  egress busy  egress wait/busy")
    for n in cns + mns:
        c = run.nodes[n]
        busy = c["port/egress_busy_ps"]
        print(f"{n:<5}{c['port/tx_bytes_mem']:>15}{c['port/rx_bytes_mem']:>16}   {pct(busy, sim_ps)}"
              f"      {c['port/egress_wait_ps'] / busy if busy else 0:8.3f}")

    e = run.engine
    print("\nrank  events   windows  loop s  events%  waits%")
    for r in range(len(e["events"])):
        loop = float(e["loop_wall_s"][r]) or 1e-9
        print(f"{r:<5}{int(e['events'][r]):>8}{int(e['windows'][r]):>10}{loop:8.2f}"
              f"   {pct(float(e['busy_wall_s'][r]), loop)}  {pct(float(e['sync_wall_s'][r]), loop)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
