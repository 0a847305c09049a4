package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// floorMode runs only the suite's booking flow and what its floor is made
// of (pgbench's inserts, /healthz), against a fresh server started as the
// suite starts it: the one row of the suite that a change of the write
// path moves, without the rest of the suite's minutes.
func floorMode(ctx context.Context, pool *pgxpool.Pool, o options) error {
	raiseFileLimit()
	base, stop, err := startChild(ctx, o.spawn, loadEnv("TRUSTED_PROXIES=127.0.0.1"), "serve")
	if err != nil {
		return err
	}
	defer stop()
	o.url = base
	book, err := bookScenario(ctx, pool, o)
	if err != nil {
		return err
	}
	tps, err := pgbenchReference(ctx, o.databaseURL, pool, book)
	if err != nil {
		return err
	}
	viaProxy := o
	viaProxy.viaProxy = true
	proxied, err := bookScenario(ctx, pool, viaProxy)
	if err != nil {
		return err
	}
	healthz, err := hammer(ctx, base+"/healthz", pagesConns, 8*time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("\n/healthz %.0f req/s, pgbench %.0f tps\n", healthz, tps)
	printFloorRow(book, proxied, healthz, tps)
	return nil
}
