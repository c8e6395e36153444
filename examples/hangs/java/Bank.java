// Two accounts and a transfer each way. On every third run (runs 3, 6,
// 9..., counted in $HANG_STATE, default .hang-count) both transfers run
// at once: transferAtoB takes a then b, transferBtoA b then a, and each
// waits for the monitor the other holds. The JVM's thread dump names the
// deadlock; only the test's time limit ends it.
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

public class Bank {
    static final Object a = new Object(), b = new Object();
    static final CountDownLatch both = new CountDownLatch(2);
    static int balanceA = 100, balanceB = 100;

    static int runNumber() throws Exception {
        String s = System.getenv("HANG_STATE");
        Path p = Path.of(s != null ? s : ".hang-count");
        int n = 1;
        try {
            n = Integer.parseInt(Files.readString(p).trim()) + 1;
        } catch (NoSuchFileException e) {
            // the first run
        }
        Files.writeString(p, Integer.toString(n));
        return n;
    }

    static void meet(boolean hangs) throws InterruptedException {
        if (hangs) {
            both.countDown();
            both.await();
        }
    }

    static void transferAtoB(boolean hangs) throws InterruptedException {
        synchronized (a) {
            meet(hangs);
            synchronized (b) {
                balanceA -= 10;
                balanceB += 10;
            }
        }
    }

    static void transferBtoA(boolean hangs) throws InterruptedException {
        synchronized (b) {
            meet(hangs);
            synchronized (a) {
                balanceB -= 10;
                balanceA += 10;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String test = args.length > 0 ? args[0] : "transfer";
        if (test.equals("deposit")) {
            balanceA += 5;
            System.exit(balanceA == 105 ? 0 : 1);
        }
        boolean hangs = runNumber() % 3 == 0;
        Thread t1 = new Thread(() -> {
            try { transferAtoB(hangs); } catch (InterruptedException e) { }
        }, "transfer-a-b");
        Thread t2 = new Thread(() -> {
            try { transferBtoA(hangs); } catch (InterruptedException e) { }
        }, "transfer-b-a");
        t1.start();
        t2.start();
        t1.join();
        t2.join();
        System.exit(balanceA + balanceB == 200 ? 0 : 1);
    }
}
