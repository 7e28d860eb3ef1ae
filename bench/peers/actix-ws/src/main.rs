//! actix-web 4 + actix-ws WebSocket echo peer: `GET /ws/echo` echoes every text and binary
//! message as sent, one worker; `GET /pong` answers the suite's readiness probe.

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use actix_ws::AggregatedMessage;

/// The largest message (and frame) accepted: the suite sends at most 16 KiB.
const MAX_MESSAGE: usize = 1 << 20;

async fn echo(req: HttpRequest, body: web::Payload) -> Result<HttpResponse, actix_web::Error> {
    let (response, mut session, stream) = actix_ws::handle(&req, body)?;
    let mut stream = stream.max_frame_size(MAX_MESSAGE).aggregate_continuations().max_continuation_size(MAX_MESSAGE);
    actix_web::rt::spawn(async move {
        while let Some(Ok(msg)) = stream.recv().await {
            let sent = match msg {
                AggregatedMessage::Text(text) => session.text(text).await,
                AggregatedMessage::Binary(bytes) => session.binary(bytes).await,
                AggregatedMessage::Ping(bytes) => session.pong(&bytes).await,
                AggregatedMessage::Pong(_) => Ok(()),
                AggregatedMessage::Close(reason) => {
                    let _ = session.close(reason).await;
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
        let _ = session.close(None).await;
    });
    Ok(response)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    HttpServer::new(|| {
        App::new().route("/pong", web::get().to(|| async { "PONG" })).route("/ws/echo", web::get().to(echo))
    })
    .workers(1)
    // No Nagle delay on the echoes, as the other peers and kiln (actix leaves it on by default).
    .tcp_nodelay(true)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
