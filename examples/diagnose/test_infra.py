"""INFRA: a service that is sometimes not there (a closed port)."""
import socket
import threading


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_talks_to_service(run_number):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    threading.Thread(target=lambda: srv.accept()[0].close(),
                     daemon=True).start()
    if run_number % 4 == 2:
        port = closed_port()   # the service is down in this run
    c = socket.create_connection(("127.0.0.1", port), timeout=2)
    c.close()
    srv.close()
