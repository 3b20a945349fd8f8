Bexternalj
locationweights.binp