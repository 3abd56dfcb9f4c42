#!/bin/sh
# Regenerates the charts docs/command.md shows. Run from the repository root:
#   sh docs/charts.sh
set -e
go run ./cmd/kolco sim balance --algo ring,rendezvous --vnodes 1,3,10,30,100,300,1000 \
	--sets 10 --keys 1000000 --plot docs/spread-vs-vnodes.png
go run ./cmd/kolco sim hotkeys --algo ring --nodes 10 --keys 10000 --zipf 1.1 \
	--requests 1000000 --in-flight 100 --plot docs/load-per-node.png
go run ./cmd/kolco sim remap --algo ring,rendezvous --vnodes 1,10,100,1000 --sets 30 \
	--keys 100000 --plot docs/moved-vs-vnodes.png
