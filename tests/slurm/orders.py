#!/usr/bin/env python3
"""orders.py SEED WORKLOAD ROUNDS ARM... -- HOST...: the arm order of every
(host, workload, round) as docs/interface.md defines it, re-derived here
independently of prereg: "HOST ROUND ARM,ARM" lines."""
import sys

M = (1 << 64) - 1


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & M
    return h


def splitmix64(state):
    state[0] = (state[0] + 0x9E3779B97F4A7C15) & M
    z = state[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def order(seed, host, workload, rnd, arms):
    h = fnv1a64(host)
    s = [((seed * 0x9E3779B97F4A7C15) & M) ^ fnv1a64(workload) ^ rnd
         ^ (((h << 32) | (h >> 32)) & M)]
    o = list(range(len(arms)))
    for i in range(len(arms), 1, -1):
        j = splitmix64(s) % i
        o[i - 1], o[j] = o[j], o[i - 1]
    return [arms[k] for k in o]


args = sys.argv[1:]
sep = args.index("--")
seed, workload, rounds, arms, hosts = int(args[0]), args[1], int(args[2]), args[3:sep], args[sep + 1:]
for host in hosts:
    for r in range(1, rounds + 1):
        print(host, r, ",".join(order(seed, host, workload, r, arms)))
