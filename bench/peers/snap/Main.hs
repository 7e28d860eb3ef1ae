{-# LANGUAGE OverloadedStrings #-}
-- | Snap peer for the kiln benchmark suite: snap-core on snap-server.
-- ACCESS_LOG is a file for the access log, or "off" (the Snap report ran both);
-- run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import Control.Applicative ((<|>))
import qualified Data.ByteString.Char8 as B
import Snap.Core
import Snap.Http.Server
import Snap.Util.FileServe (serveDirectory)
import System.Environment (lookupEnv)

main :: IO ()
main = do
  port <- maybe 8080 read <$> lookupEnv "PORT"
  static <- maybe "static" id <$> lookupEnv "STATIC_DIR"
  accessLog <- maybe "off" id <$> lookupEnv "ACCESS_LOG"
  let logTo = if accessLog == "off" then ConfigNoLog else ConfigFileLog accessLog
      config =
        setPort port . setBind "127.0.0.1" . setAccessLog logTo . setErrorLog ConfigNoLog . setVerbose False $
          defaultConfig
  httpServe config (keepAlive10 >> site static)

site :: FilePath -> Snap ()
site static =
  route [("pong", ifTop (plain "PONG")), ("hello", ifTop (plain "Hello World!"))]
    <|> dir "static" (serveDirectory static)

plain :: B.ByteString -> Snap ()
plain body = do
  modifyResponse (setContentType "text/plain" . setContentLength (fromIntegral (B.length body)))
  writeBS body

-- | Snap keeps an HTTP/1.0 keep-alive connection open but does not say so, and ab -k then
-- waits for a close that never comes: answer the client's keep-alive with the header.
keepAlive10 :: Snap ()
keepAlive10 = do
  req <- getRequest
  let asked = B.map lower <$> getHeader "Connection" req
  if rqVersion req == (1, 0) && asked == Just "keep-alive"
    then modifyResponse (setHeader "Connection" "keep-alive")
    else return ()
  where
    lower c = if c >= 'A' && c <= 'Z' then toEnum (fromEnum c + 32) else c
