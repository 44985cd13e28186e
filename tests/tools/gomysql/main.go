// Command gomysql_check reads a binlog from binlog_server with go-mysql's
// replication.BinlogSyncer (an implementation of the MySQL replication
// protocol independent of ours) and checks that every transaction arrives
// once, in order, decodable and with intact CRC32 checksums.
//
//	gomysql_check -port=N -user=U -password=P
//	    (-file=NAME -pos=N | -gtid=SET) -uuid=UUID -first=A -last=B
//	    [-ssl_ca=PEM]
//
// With -ssl_ca the connection uses TLS (1.2 or later) and verifies the
// server's certificate against that CA and the address 127.0.0.1.
//
// It reads until it has B-A+1 transactions or GNO B (each a GTID event,
// Query events and an Xid event; Rows events, if any, decoded) and prints
// one line per transaction ("txn GNO xid=X queries=Q rows=R"). Exit 0 when
// the GTIDs are exactly UUID:A..B in order, 1 otherwise (a reason on
// stdout), 2 on bad arguments. Gives up after -timeout.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

var logName = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.[0-9]{6}$`)

func main() {
	os.Exit(run())
}

func run() int {
	port := flag.Int("port", 0, "binlog_server port on 127.0.0.1")
	user := flag.String("user", "", "user")
	password := flag.String("password", "", "password")
	file := flag.String("file", "", "start file (with -pos)")
	pos := flag.Uint("pos", 4, "start position (with -file)")
	gtid := flag.String("gtid", "", "MySQL GTID set the replica has (COM_BINLOG_DUMP_GTID)")
	uuid := flag.String("uuid", "", "source UUID of the expected transactions")
	first := flag.Int64("first", 1, "first expected GNO")
	last := flag.Int64("last", 0, "last expected GNO")
	timeout := flag.Duration("timeout", 15*time.Second, "give up after this long")
	sslCA := flag.String("ssl_ca", "", "CA certificates (PEM): connect over TLS, verifying the server")
	flag.Parse()
	if *port == 0 || *uuid == "" || *last < *first || (*file == "") == (*gtid == "") {
		fmt.Println("usage: -port -user -password (-file -pos | -gtid) -uuid -first -last")
		return 2
	}

	cfg := replication.BinlogSyncerConfig{
		ServerID:         4243,
		Flavor:           mysql.MySQLFlavor,
		Host:             "127.0.0.1",
		Port:             uint16(*port),
		User:             *user,
		Password:         *password,
		VerifyChecksum:   true, // CRC32 of every event once the FDE says CRC32
		DisableRetrySync: true, // a broken stream is a failure, not a retry
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if *gtid != "" {
		cfg.DiscardGTIDSet = true
	}
	if *sslCA != "" {
		pem, err := os.ReadFile(*sslCA)
		if err != nil {
			fmt.Printf("-ssl_ca: %v\n", err)
			return 2
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fmt.Printf("-ssl_ca: no certificate in %s\n", *sslCA)
			return 2
		}
		cfg.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()

	var streamer *replication.BinlogStreamer
	var err error
	if *gtid != "" {
		set, perr := mysql.ParseMysqlGTIDSet(*gtid)
		if perr != nil {
			fmt.Printf("bad -gtid %q: %v\n", *gtid, perr)
			return 2
		}
		streamer, err = syncer.StartSyncGTID(set)
	} else {
		streamer, err = syncer.StartSync(mysql.Position{Name: *file, Pos: uint32(*pos)})
	}
	if err != nil {
		fmt.Printf("start sync: %v\n", err)
		return 1
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	want := *last - *first + 1
	var got []int64
	var problems []string
	sawCRC32 := false
	inTxn := false
	var queries, rows int
	// Until N transactions or the last expected GNO (a dropped transaction
	// then fails at once instead of at the timeout), and the end of the
	// transaction.
	done := func() bool {
		return int64(len(got)) >= want || (len(got) > 0 && got[len(got)-1] >= *last)
	}
	for !done() || inTxn {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			// ErrChecksumMismatch and decoding errors arrive here.
			problems = append(problems, fmt.Sprintf("after %d transactions: %v", len(got), err))
			break
		}
		switch e := ev.Event.(type) {
		case *replication.FormatDescriptionEvent:
			if e.ChecksumAlgorithm != replication.BINLOG_CHECKSUM_ALG_CRC32 {
				problems = append(problems, fmt.Sprintf("FDE checksum algorithm %d, want CRC32", e.ChecksumAlgorithm))
			}
			sawCRC32 = true
		case *replication.RotateEvent:
			// The first (fake) Rotate comes before the FDE, so go-mysql
			// cannot strip a checksum from it: with one, the name would
			// end in its 4 bytes.
			if !logName.Match(e.NextLogName) {
				problems = append(problems, fmt.Sprintf("Rotate to %q", e.NextLogName))
			}
		case *replication.GTIDEvent:
			if inTxn {
				problems = append(problems, "GTID event inside a transaction")
			}
			if !sawCRC32 {
				problems = append(problems, "GTID event before a CRC32 FDE (checksums not verified)")
			}
			u, uerr := e.SID, error(nil)
			if len(u) != 16 {
				uerr = fmt.Errorf("SID of %d bytes", len(u))
			}
			if uerr != nil {
				problems = append(problems, uerr.Error())
			} else if s := formatUUID(u); s != *uuid {
				problems = append(problems, "unexpected uuid "+s)
			}
			got = append(got, e.GNO)
			inTxn = true
			queries, rows = 0, 0
		case *replication.QueryEvent:
			if !inTxn {
				problems = append(problems, fmt.Sprintf("Query event outside a transaction: %q", e.Query))
			}
			queries++
		case *replication.TableMapEvent:
			if !inTxn {
				problems = append(problems, "Table_map event outside a transaction")
			}
		case *replication.RowsEvent:
			if !inTxn {
				problems = append(problems, "Rows event outside a transaction")
			}
			rows += len(e.Rows)
		case *replication.XIDEvent:
			if !inTxn {
				problems = append(problems, "Xid event outside a transaction")
			} else {
				fmt.Printf("txn %d xid=%d queries=%d rows=%d\n", got[len(got)-1], e.XID, queries, rows)
			}
			inTxn = false
		case *replication.TransactionPayloadEvent:
			problems = append(problems, "compressed Transaction_payload reached the client")
		}
		if len(problems) > 0 {
			break
		}
	}
	if len(problems) == 0 {
		if int64(len(got)) != want {
			problems = append(problems, fmt.Sprintf("received %d transactions, want %d", len(got), want))
		} else {
			for i, g := range got {
				if g != *first+int64(i) {
					problems = append(problems, fmt.Sprintf("received GNOs %v, want %d..%d", got, *first, *last))
					break
				}
			}
		}
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Println(p)
		}
		return 1
	}
	fmt.Printf("ok: %d transactions\n", len(got))
	return 0
}

func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
