// Command etcd is etcd's own entry point (the server module's etcdmain), the main package the server
// module does not ship.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
