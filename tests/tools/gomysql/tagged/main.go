// Command gomysql_tagged prints what go-mysql (an implementation of the
// MySQL binlog format and replication protocol independent of ours)
// decodes of a log holding MySQL 8.4 tagged GTIDs, read two ways:
//
//	gomysql_tagged -files=PATH[,PATH...]
//	    replication.BinlogParser reads the files at rest, in that order.
//	gomysql_tagged -port=N -user=U -password=P -gtid=SET -count=N
//	    replication.BinlogSyncer streams from binlog_server on 127.0.0.1
//	    with COM_BINLOG_DUMP_GTID and the MySQL GTID set SET (tags
//	    allowed, go-mysql encodes it), until N transactions arrived.
//
// CRC32 checksums are verified in both modes. Output, one line each:
//
//	previous_gtids SET          (-files: each Previous_gtids event, as
//	                             go-mysql prints it)
//	gtid UUID[:TAG]:GNO type=T last_committed=L sequence_number=S
//	    immediate_us=I original_us=O length=N
//	                            (T: go-mysql's name of the event type;
//	                             N: the event's transaction_length)
//	row SCHEMA.TABLE KIND VALUES (KIND insert, update, delete; VALUES as Go
//	                             prints the decoded row, [before] [after]
//	                             for an update)
//	xid X span=M               (M: the bytes from the GTID event to the
//	                             end of the event holding the Xid, from
//	                             the events' log_pos)
//	payload compression=C events=E
//	                            (a Transaction_payload, before the E events
//	                             go-mysql expanded from it)
//	executed SET                (-port: go-mysql's own GTID set after the
//	                             last transaction: SET plus what arrived;
//	                             "-" when its Xid was inside a
//	                             Transaction_payload, where go-mysql
//	                             attaches none)
//	ok: N transactions
//
// Exit 0 when every event decoded and every transaction was whole, 1
// otherwise (the reason printed), 2 on bad arguments.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

func main() {
	os.Exit(run())
}

// printer turns decoded events into the output lines and checks that
// transactions are whole.
type printer struct {
	inTxn        bool
	gtidStart    uint32 // offset of the current GTID event in its file
	xid          uint64 // the Xid just decoded, printed when its outer event ends
	sawXid       bool
	transactions int
	problems     []string
}

func (p *printer) fail(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

func uuidString(b []byte) string {
	if len(b) != 16 {
		return fmt.Sprintf("bad-sid-%x", b)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (p *printer) gtid(h *replication.EventHeader, g *replication.GTIDEvent) {
	if p.inTxn {
		p.fail("GTID event inside a transaction")
	}
	p.inTxn = true
	p.gtidStart = h.LogPos - h.EventSize
	id := uuidString(g.SID)
	if t := g.Tag.String(); t != "" {
		id += ":" + t
	}
	fmt.Printf("gtid %s:%d type=%s last_committed=%d sequence_number=%d immediate_us=%d original_us=%d length=%d\n",
		id, g.GNO, h.EventType, g.LastCommitted, g.SequenceNumber,
		g.ImmediateCommitTimestamp, g.OriginalCommitTimestamp, g.TransactionLength)
}

// handle prints one event read from the file or the stream; `span` ends
// a transaction at the end of the outer event holding its Xid (the Xid
// itself, or a Transaction_payload event).
func (p *printer) handle(ev *replication.BinlogEvent) {
	p.event(ev)
	if p.sawXid {
		fmt.Printf("xid %d span=%d\n", p.xid, ev.Header.LogPos-p.gtidStart)
		p.sawXid = false
	}
}

func (p *printer) event(ev *replication.BinlogEvent) {
	switch e := ev.Event.(type) {
	case *replication.PreviousGTIDsEvent:
		fmt.Printf("previous_gtids %s\n", e.GTIDSets)
	case *replication.GtidTaggedLogEvent:
		p.gtid(ev.Header, &e.GTIDEvent)
	case *replication.GTIDEvent:
		p.gtid(ev.Header, e)
	case *replication.RowsEvent:
		if !p.inTxn {
			p.fail("Rows event outside a transaction")
			return
		}
		p.rows(ev.Header, e)
	case *replication.XIDEvent:
		if !p.inTxn {
			p.fail("Xid event outside a transaction")
			return
		}
		p.inTxn = false
		p.transactions++
		p.xid = e.XID
		p.sawXid = true
	case *replication.TransactionPayloadEvent:
		if !p.inTxn {
			p.fail("Transaction_payload event outside a transaction")
			return
		}
		// Not UncompressedSize: go-mysql v1.15.0 reads the header's field
		// values as fixed-length integers, while MySQL writes them as
		// packed integers (0xfc prefix from 251 on), so it misreads every
		// size above 250; it decompresses the frame without it.
		fmt.Printf("payload compression=%d events=%d\n", e.CompressionType, len(e.Events))
		// go-mysql expands the payload into its events.
		for _, inner := range e.Events {
			p.event(inner)
		}
	}
}

func (p *printer) rows(h *replication.EventHeader, e *replication.RowsEvent) {
	kind := ""
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv2:
		kind = "insert"
	case replication.UPDATE_ROWS_EVENTv2:
		kind = "update"
	case replication.DELETE_ROWS_EVENTv2:
		kind = "delete"
	default:
		p.fail("unexpected rows event %s", h.EventType)
		return
	}
	name := string(e.Table.Schema) + "." + string(e.Table.Table)
	if kind == "update" {
		if len(e.Rows)%2 != 0 {
			p.fail("update with %d row images", len(e.Rows))
			return
		}
		for i := 0; i < len(e.Rows); i += 2 {
			fmt.Printf("row %s update %v %v\n", name, e.Rows[i], e.Rows[i+1])
		}
		return
	}
	for _, r := range e.Rows {
		fmt.Printf("row %s %s %v\n", name, kind, r)
	}
}

func run() int {
	files := flag.String("files", "", "comma-separated binlog files to read at rest")
	port := flag.Int("port", 0, "binlog_server port on 127.0.0.1")
	user := flag.String("user", "", "user")
	password := flag.String("password", "", "password")
	gtid := flag.String("gtid", "", "MySQL GTID set the replica has (tags allowed)")
	count := flag.Int("count", 0, "transactions to stream")
	timeout := flag.Duration("timeout", 20*time.Second, "give up after this long")
	flag.Parse()
	if (*files == "") == (*port == 0) || (*port != 0 && *count <= 0) {
		fmt.Println("usage: -files=PATH,... | -port -user -password -gtid -count")
		return 2
	}
	p := &printer{}
	if *files != "" {
		readFiles(p, strings.Split(*files, ","))
	} else if code := stream(p, *port, *user, *password, *gtid, *count, *timeout); code != 0 {
		return code
	}
	if p.inTxn {
		p.fail("the last transaction has no Xid")
	}
	if len(p.problems) > 0 {
		for _, s := range p.problems {
			fmt.Println(s)
		}
		return 1
	}
	fmt.Printf("ok: %d transactions\n", p.transactions)
	return 0
}

func readFiles(p *printer, paths []string) {
	parser := replication.NewBinlogParser()
	parser.SetVerifyChecksum(true)
	parser.SetFlavor(mysql.MySQLFlavor)
	for _, path := range paths {
		err := parser.ParseFile(path, 0, func(ev *replication.BinlogEvent) error {
			p.handle(ev)
			return nil
		})
		if err != nil {
			p.fail("%s: %v", path, err)
			return
		}
	}
}

func stream(p *printer, port int, user, password, gtid string, count int, timeout time.Duration) int {
	set, err := mysql.ParseMysqlGTIDSet(gtid)
	if err != nil {
		fmt.Printf("bad -gtid %q: %v\n", gtid, err)
		return 2
	}
	cfg := replication.BinlogSyncerConfig{
		ServerID:         4244,
		Flavor:           mysql.MySQLFlavor,
		Host:             "127.0.0.1",
		Port:             uint16(port),
		User:             user,
		Password:         password,
		VerifyChecksum:   true,
		DisableRetrySync: true,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(set)
	if err != nil {
		fmt.Printf("start sync: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var executed string
	for p.transactions < count && len(p.problems) == 0 {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			p.fail("after %d transactions: %v", p.transactions, err)
			break
		}
		if _, ok := ev.Event.(*replication.PreviousGTIDsEvent); ok {
			continue // the server's, not the files': not compared here
		}
		// BinlogSyncer attaches its executed set to the Xid events it
		// sees; an Xid inside a Transaction_payload has none.
		switch e := ev.Event.(type) {
		case *replication.XIDEvent:
			executed = "-"
			if e.GSet != nil {
				executed = e.GSet.String()
			}
		case *replication.TransactionPayloadEvent:
			executed = "-"
		}
		p.handle(ev)
	}
	if len(p.problems) == 0 {
		fmt.Printf("executed %s\n", executed)
	}
	return 0
}
