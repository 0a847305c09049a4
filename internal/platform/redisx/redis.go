// Package redisx opens the Redis client.
package redisx

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Connect opens a universal client (a single node today, Redis Cluster when
// given several addresses) without requiring Redis to be up: the server
// starts and answers 503 for what needs Redis until it is back.
func Connect(url string, poolSize int) (redis.UniversalClient, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opt.PoolSize = poolSize
	// Short timeouts and one retry: with Redis down a request should fail
	// (holds) or fall back (caches) within about a second, not hang.
	opt.MaxRetries = 1
	opt.DialTimeout = 500 * time.Millisecond
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	return redis.NewClient(opt), nil
}

// Ping checks Redis answers within a second.
func Ping(ctx context.Context, c redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}
