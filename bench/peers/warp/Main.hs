{-# LANGUAGE OverloadedStrings #-}
-- | Warp (WAI) peer for the kiln benchmark suite: a bare WAI application on Warp, the big
-- table in blaze-html. Run it with +RTS -N1 for one core; it reads PORT and STATIC_DIR.
module Main (main) where

import Control.Monad (forM_, join)
import qualified Data.ByteString.Char8 as B
import qualified Data.ByteString.Lazy.Char8 as L
import qualified Data.Text as T
import Network.HTTP.Types
import Network.Wai
import Network.Wai.Internal (Response (ResponseFile))
import Network.Wai.Handler.Warp
import System.Environment (lookupEnv)
import System.FilePath ((</>))
import Text.Blaze.Html.Renderer.Utf8 (renderHtmlBuilder)
import qualified Text.Blaze.Html5 as H
import Text.Read (readMaybe)

main :: IO ()
main = do
  port <- maybe 8080 read <$> lookupEnv "PORT"
  static <- maybe "static" id <$> lookupEnv "STATIC_DIR"
  let settings = setPort port $ setHost "127.0.0.1" defaultSettings
  runSettings settings (keepAlive10 (app static))

app :: FilePath -> Application
app static req respond = case pathInfo req of
  ["pong"] -> respond (plain "PONG")
  ["hello"] -> respond (plain "Hello World!")
  ["bigtable"] -> respond $ case tableSize (param "rows") (param "cols") of
    Just (rows, cols) -> responseBuilder status200 [(hContentType, "text/html; charset=utf-8")] (renderHtmlBuilder (bigtable rows cols))
    Nothing -> responseLBS status400 [(hContentType, "text/plain")] "bigtable is limited to 10000 rows and 1000 columns\n"
  ["static", name]
    | safe name -> respond (responseFile status200 [(hContentType, "text/plain")] (static </> T.unpack name) Nothing)
  _ -> respond (responseLBS status404 [(hContentLength, "0")] "")
  where
    param name = B.unpack <$> join (lookup name (queryString req))

-- | Yesod's bigtable: rows × cols, each cell its column number.
bigtable :: Int -> Int -> H.Html
bigtable rows cols = H.table $ forM_ [1 .. rows] $ \_ -> H.tr $ forM_ [1 .. cols] $ \col -> H.td (H.toHtml col)

-- | The table's size from the query: 1000 × 50 unless given, kiln's limits (10,000 rows,
-- 1,000 columns, 100,000 cells: rows beyond them dropped); Nothing for a bad value.
tableSize :: Maybe String -> Maybe String -> Maybe (Int, Int)
tableSize rows cols = do
  r <- size rows 1000 10000
  c <- size cols 50 1000
  return (min r (100000 `div` max 1 c), c)
  where
    size Nothing def _ = Just def
    size (Just raw) _ most = case readMaybe raw of
      Just n | n >= 0 && n <= most -> Just n
      _ -> Nothing

-- | A fixed body with its length: without Content-Length an HTTP/1.0 answer must close.
plain :: L.ByteString -> Response
plain body = responseLBS status200 [(hContentType, "text/plain"), (hContentLength, B.pack (show (L.length body)))] body

safe :: T.Text -> Bool
safe name = not (T.null name) && T.head name /= '.'

-- | Warp keeps an HTTP/1.0 keep-alive connection open but does not say so, and ab -k then
-- waits for a close that never comes: answer the client's keep-alive with the header. Only
-- for a delimited body: a streamed one (the big table) has no length, so Warp must close.
keepAlive10 :: Middleware
keepAlive10 inner req respond
  | httpVersion req == http10, wantsKeepAlive req = inner req (respond . announce)
  | otherwise = inner req respond
  where
    announce res
      | delimited res = mapResponseHeaders ((hConnection, "keep-alive") :) res
      | otherwise = res

-- | Whether the client can tell where the body ends: Warp sizes a file itself.
delimited :: Response -> Bool
delimited ResponseFile {} = True
delimited res = any ((== hContentLength) . fst) (responseHeaders res)

wantsKeepAlive :: Request -> Bool
wantsKeepAlive req = fmap (B.map toLowerAscii) (lookup hConnection (requestHeaders req)) == Just "keep-alive"
  where
    toLowerAscii c = if c >= 'A' && c <= 'Z' then toEnum (fromEnum c + 32) else c
