package grpcbalancer_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kolco-dev/kolco/adapter/grpcbalancer"
	"github.com/kolco-dev/kolco/adapter/shards"
	"github.com/kolco-dev/kolco/membership"
)

// A client whose backends are the servers of a nutcracker.yml pool (any
// membership source will do) and whose requests are placed by jump on the
// key each carries.
func Example() {
	grpcbalancer.Register() // in an init function, as grpc-go asks
	sc := grpcbalancer.ServiceConfig(grpcbalancer.Config{Config: shards.Config{Distribution: "jump"}, Header: "x-user"})
	fmt.Println(sc)

	src := &membership.File{Path: "/etc/kolco/backends.yml"}
	conn, err := grpc.NewClient(grpcbalancer.Scheme+":///backends", grpc.WithResolvers(grpcbalancer.NewResolver(src)),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultServiceConfig(sc))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	// Each request's key: WithKey, or the x-user header.
	ctx := grpcbalancer.WithKey(context.Background(), "user:42")
	_ = ctx // client.Get(ctx, req) goes to user:42's backend
	// Output:
	// {"loadBalancingConfig":[{"kolco_hash":{"distribution":"jump","header":"x-user"}}]}
}
